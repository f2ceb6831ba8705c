"""A grid that follows the data and a time budget that protects the model (issue 38).

The CV estimators go on past the edge of their grid of C when the best validation score sits
there (:class:`problems.model_selection.GridExtension`), warm and certified, and keep the refit's
time out of the path (:class:`problems.model_selection.RefitBudget`); ``cutplane train`` reports
the extension and exits with status 3 when the saved model is not certified.
"""

import json
import time
import warnings

import numpy as np
import pytest

from cutplane.exceptions import ConvergenceWarning
from problems.cli.main import main
from problems.cli.train import EXIT_UNCERTIFIED
from problems.io.conll import write_columns
from problems.model_selection import GridExtension, RefitBudget, extended_direction
from problems.sequence import SequenceTaggerCV
from problems.solvers import SPOM, CuttingPlane
from problems.structured import StructuredSVM, StructuredSVMCV
from problems.synthetic import make_tagging_task
from tests.problems.structured_test_models import make_multilabel

EPS = 1e-3


@pytest.fixture(scope="module")
def multilabel():
    """Noise-free multi-label data: the validation score rises with C up to 1e4, then falls."""
    model, X, Y = make_multilabel(120, n_features=3, n_labels=3, noise=0.0, seed=1)
    return model, X[:80], Y[:80], X[80:], Y[80:]


@pytest.fixture(scope="module")
def tagging():
    return make_tagging_task(n_train=40, n_test=20, length=8, n_labels=3, n_informative=2, n_noise=2, seed=3)


def _cv(multilabel, Cs, **kw):
    model, X, Y, Xv, Yv = multilabel
    return StructuredSVMCV(model, Cs=Cs, solver=CuttingPlane(eps=EPS), **kw).fit(X, Y, validation_data=(Xv, Yv))


# ----------------------------------------------------------------------- the estimators
def test_best_C_beyond_the_grid_extends_above_and_is_chosen(multilabel):
    model, X, Y, Xv, Yv = multilabel
    cv = _cv(multilabel, [1.0, 10.0])
    path = cv.path_
    # the best of the grid given is its largest C: the path went on by the grid's ratio (10)
    assert path["C"] == [1.0, 10.0, 100.0, 1000.0]
    assert path["extension"] == [False, False, True, True]
    assert cv.extended_ == "above" and extended_direction(path) == "above"
    scores = path["validation_score"]
    assert scores[2] > max(scores[:2]) and scores[3] > scores[2]  # still rising: extend=2 is the cap
    assert cv.C_ == 1000.0 and cv.best_index_ == 3
    assert cv.score(Xv, Yv) == pytest.approx(scores[3])
    # each added point certified as the grid's, to the same optimum as a cold run at its C
    assert cv.path_result_.lams == tuple(1.0 / C for C in path["C"])
    for i in range(len(path["C"])):
        assert path["status"][i] == "converged" and path["gap"][i] <= EPS * (1 + 1e-9)
        assert path["lower_bound"][i] <= path["objective"][i]
    cold = StructuredSVM(model, C=1000.0, solver=CuttingPlane(eps=EPS)).fit(X, Y)
    assert abs(cold.objective_ - path["objective"][3]) <= 2 * EPS
    # extend=0: scikit-learn's behaviour, the edge given
    edge = _cv(multilabel, [1.0, 10.0], extend=0)
    assert edge.path_["C"] == [1.0, 10.0] and edge.C_ == 10.0 and edge.extended_ is None
    assert edge.path_["extension"] == [False, False]
    assert scores[3] > edge.path_["validation_score"][1]  # the extension chose the better C


def test_extension_stops_when_the_score_turns_down(multilabel):
    cv = _cv(multilabel, [0.01, 1.0, 100.0], extend=5)
    path = cv.path_
    # 1e4 scores higher than the grid's best, 1e6 lower: no 1e8 although the cap allows it
    assert path["C"] == [0.01, 1.0, 100.0, 1e4, 1e6]
    assert path["validation_score"][3] > max(path["validation_score"][:3])
    assert path["validation_score"][4] < path["validation_score"][3]
    assert cv.C_ == 1e4 and cv.extended_ == "above"


def test_best_inside_the_grid_does_not_extend(multilabel):
    cv = _cv(multilabel, [0.01, 0.1, 1.0])
    assert cv.path_["C"] == [0.01, 0.1, 1.0] and cv.path_["extension"] == [False] * 3
    assert cv.C_ == 0.1 and cv.extended_ is None and len(cv.path_result_.lams) == 3


def test_extends_below_and_keeps_the_better_grid_point(tagging):
    task = tagging
    # BMRM's points (the default was BMRM when this case was found): this data's best score at
    # the grid's lower edge depends on which of the points within each tolerance the method ends at
    cv = SequenceTaggerCV(task.templates, Cs=[0.01, 0.1], regularizer="mtl", solver=CuttingPlane(method="bmrm")).fit(
        task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
    )
    path = cv.path_
    assert path["C"] == pytest.approx([0.01, 0.1, 0.001]) and path["extension"] == [False, False, True]
    assert cv.extended_ == "below"
    # the added point scored lower: the extension stopped there and C_ stays the grid's edge
    assert path["validation_score"][2] < path["validation_score"][0]
    assert cv.C_ == 0.01 and path["status"][2] == "converged"
    assert path["eps"][2] == pytest.approx(0.01 * 0.001)  # the grid's default tolerance, 0.01 * C on F


def test_extension_with_a_held_out_fraction_refits_at_an_added_point(multilabel, tmp_path):
    model, X, Y, Xv, Yv = multilabel
    cv = StructuredSVMCV(model, Cs=[0.1, 1.0], solver=CuttingPlane(eps=EPS), validation_fraction=0.25)
    cv.fit(X + Xv, Y + Yv)
    assert cv.extended_ == "above" and cv.path_["extension"][cv.best_index_] is True and cv.C_ > 1.0
    assert cv.validation_["refit"] is True and cv.result_.status == "converged"
    plain = StructuredSVM(model, C=cv.C_, solver=CuttingPlane(eps=EPS)).fit(X + Xv, Y + Yv)
    assert abs(plain.objective_ - cv.objective_) <= 2 * EPS
    # the model file keeps the path with its extension column
    back = StructuredSVM.load(cv.save(tmp_path / "cv.npz"))
    assert back.path_ == cv.path_ and back.extended_ == "above" and back.C_ == cv.C_


def test_spom_extends_too(tagging):
    task = tagging
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cv = SequenceTaggerCV(task.templates, Cs=[0.001, 0.01], regularizer="ssvm", solver=SPOM(epochs=2)).fit(
            task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
        )
    path = cv.path_
    assert len(path["C"]) == len(path["extension"]) and path["C"][:2] == [0.001, 0.01]
    if cv.extended_ is not None:  # SPOM's scores decide; when it went on, the added points are marked
        assert all(path["extension"][2:]) and path["gap"][2:] == [None] * (len(path["C"]) - 2)


# -------------------------------------------------------------------------- the rules
def _grid(values, scores, statuses=None, limit=2, allow=None):
    ext = GridExtension(values, limit, eps_of=lambda C: 0.01, allow=allow)
    for i, (C, s) in enumerate(zip(values, scores)):
        ext.record(C, s, "converged" if statuses is None else statuses[i])
    return ext


def test_grid_extension_rules():
    # the best at the top: step by the grid's ratio at that edge
    ext = _grid([100.0, 1000.0, 10000.0], [0.5, 0.6, 0.7])
    assert ext() == (pytest.approx(1e5), 0.01) and ext.direction == "above"
    ext.record(1e5, 0.8, "converged")
    assert ext()[0] == pytest.approx(1e6)
    ext.record(1e6, 0.9, "converged")
    assert ext() is None  # the cap (limit=2)
    # the score stops rising (a tie) or turns down: no further point
    ext = _grid([1.0, 10.0], [0.5, 0.6], limit=5)
    ext()
    ext.record(100.0, 0.6, "converged")
    assert ext() is None
    # at the bottom edge, by the ratio there (the grid in any order, not geometric)
    ext = _grid([50.0, 2.0, 1.0], [0.1, 0.2, 0.9])
    assert ext()[0] == pytest.approx(0.5) and ext.direction == "below"
    # inside, flat (a tie with the edge), off, no time, an uncertified edge, one C: nothing
    assert _grid([1.0, 10.0, 100.0], [0.5, 0.7, 0.6])() is None
    assert _grid([1.0, 10.0], [0.7, 0.7])() is None
    assert _grid([1.0, 10.0], [0.5, 0.7], limit=0)() is None
    assert _grid([1.0, 10.0], [0.5, 0.7], allow=lambda: False)() is None
    assert _grid([1.0, 10.0], [0.5, 0.7], statuses=["converged", "max_iter"])() is None
    assert _grid([10.0], [0.7])() is None
    # a point of the grid not run: the grid did not finish, no extension
    ext = GridExtension([1.0, 10.0], 2, eps_of=lambda C: 0.01)
    ext.record(1.0, 0.5, "converged")
    assert ext() is None


def test_refit_budget_rule():
    now = time.perf_counter()
    budget = RefitBudget(now - 10.0, 100.0, 1.25)  # 10 s spent, 90 s left
    assert budget.reserve(4.0) == pytest.approx(RefitBudget.MARGIN * 1.25 * 4.0)
    assert budget.allows_new_point() and not budget.running_point_over()
    budget.point_done(40.0)  # the best point so far took 40 s: its refit needs 100 s
    assert not budget.allows_new_point()
    assert budget.running_point_over() and budget.stopped
    assert budget.callback()(None) is True
    calls = []
    fresh = RefitBudget(time.perf_counter(), 1000.0, 1.0)
    assert fresh.callback(lambda info: calls.append(info) or False)("info") is False and calls == ["info"]


def test_the_path_keeps_the_refit_time(multilabel, monkeypatch):
    """A budget that cannot pay for any path point beside the refit: the first point is stopped
    (path_ status time_limit), no other point starts, and the refit at that C gets the time and
    is certified."""
    model, X, Y, Xv, Yv = multilabel
    monkeypatch.setattr(RefitBudget, "MARGIN", 1e9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv = StructuredSVMCV(
            model, Cs=[1.0, 10.0, 100.0], solver=CuttingPlane(eps=EPS, time_limit=600.0), validation_fraction=0.25
        ).fit(X + Xv, Y + Yv)
    assert cv.path_["status"] == ["time_limit", "not_run", "not_run"]
    assert cv.C_ == 1.0 and cv.extended_ is None
    assert cv.validation_["refit"] is True and cv.result_.status == "converged" and cv.gap_ <= EPS * (1 + 1e-9)
    assert any("not_run" in str(w.message) for w in caught)
    # without a time limit nothing is reserved: the same grid runs to its end
    free = StructuredSVMCV(model, Cs=[1.0, 10.0, 100.0], solver=CuttingPlane(eps=EPS), validation_fraction=0.25)
    assert "not_run" not in free.fit(X + Xv, Y + Yv).path_["status"]


# ---------------------------------------------------------------------------- the CLI
@pytest.fixture(scope="module")
def files(tmp_path_factory, tagging):
    d = tmp_path_factory.mktemp("extend")
    rename = {"L0": "B-NP", "L1": "I-NP", "L2": "O"}
    write_columns(d / "train.txt", tagging.X_train, [[rename[t] for t in s] for s in tagging.y_train])
    write_columns(d / "dev.txt", tagging.X_test, [[rename[t] for t in s] for s in tagging.y_test])
    (d / "t.tpl").write_text(tagging.templates)
    return d


def _train(d, *extra):
    argv = ["train", "--task", "sequence", "--templates", str(d / "t.tpl"), "--train", str(d / "train.txt")]
    argv += ["--regularizer", "ssvm", "--dev", str(d / "dev.txt"), "--model", str(d / "m.npz")]
    return main(argv + ["--report", str(d / "r.json"), *[str(a) for a in extra]])


def test_cli_reports_the_extension_and_turns_it_off(files, capsys):
    d = files
    # BMRM's points (the default when this case was found): on this data its added point scores
    # above the grid's edge, which depends on which point within each tolerance the method ends at
    assert _train(d, "--C", "0.001", "0.01", "--method", "bmrm") == 0
    report = json.loads((d / "r.json").read_text())
    assert report["extended"] == "above" and report["C_grid"][:2] == [0.001, 0.01] and len(report["C_grid"]) > 2
    assert report["path"]["extension"] == [False, False] + [True] * (len(report["C_grid"]) - 2)
    assert report["C"] == report["C_grid"][int(np.argmax(report["path"]["validation_score"]))]
    assert report["C"] > 0.01 and report["status"] == "converged"
    assert "the path went on above the grid given" in capsys.readouterr().out
    assert _train(d, "--C", "0.001", "0.01", "--no-extend") == 0
    report = json.loads((d / "r.json").read_text())
    assert report["extended"] is None and report["C_grid"] == [0.001, 0.01] and report["C"] == 0.01
    assert "went on" not in capsys.readouterr().out
    assert _train(d, "--C", "0.001", "0.01", "--extend", "1") == 0
    assert len(json.loads((d / "r.json").read_text())["C_grid"]) == 3
    # one C: nothing to extend, the field is null
    assert _train(d, "--C", "0.1") == 0 and json.loads((d / "r.json").read_text())["extended"] is None
    capsys.readouterr()


def test_cli_exit_status_of_an_uncertified_model(files, capsys):
    d = files
    (d / "m.npz").unlink(missing_ok=True)
    code = _train(d, "--C", "100", "--eps", "1e-6", "--max-iter", "2")
    assert code == EXIT_UNCERTIFIED == 3
    # the model and the report are written as before: no work is lost
    report = json.loads((d / "r.json").read_text())
    assert (d / "m.npz").exists() and report["status"] == "max_iter"
    err = capsys.readouterr().err
    assert f"certified gap {report['gap']:.4g} against eps {report['eps']:.4g}" in err
    assert "status max_iter" in err and "--allow-uncertified" in err
    assert _train(d, "--C", "100", "--eps", "1e-6", "--max-iter", "2", "--allow-uncertified") == 0
    assert "not certified" in capsys.readouterr().err
    # a certified model: status 0, no such line
    assert _train(d, "--C", "100") == 0 and "not certified" not in capsys.readouterr().err
    # --extend is for the structured tasks
    assert main(["train", "--task", "binary", "--train", str(d / "x.svm"), "--model", "m", "--extend", "1"]) == 2
    assert "--extend" in capsys.readouterr().err
