"""C as a grid chosen on held-out data (issue 21; the CV estimators of issue 36): the
``SequenceTaggerCV`` / ``DependencyParserCV`` grids ``Cs`` and ``"auto"``, LinearSVM's ``C``
sequences, ``validation_data`` / ``validation_fraction``, ``C_`` / ``path_`` and their model
files."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from cutplane.exceptions import ConvergenceWarning, InputError
from problems.demo_data import make_binary
from problems.linear.svm import LinearSVM
from problems.metrics.chunking import chunk_f1, is_chunk_tagset
from problems.model_io import load_model, save_model
from problems.model_selection import check_C, holdout_split
from problems.parsing.parser import DependencyParser, DependencyParserCV
from problems.sequence.tagger import SequenceTagger, SequenceTaggerCV
from problems.solvers import SPOM, CuttingPlane
from problems.synthetic import make_tagging_task
from problems.template_learning import DEFAULT_C_GRIDS
from problems.validation import UnseenLabelWarning
from tests.problems.test_dependency_parser import TEMPLATES as PARSE_TEMPLATES
from tests.problems.test_dependency_parser import make_treebank

COLUMNS = ("C", "eps", "objective", "lower_bound", "gap", "status", "n_iter", "seconds", "validation_score")
BIO = {"L0": "B-NP", "L1": "I-NP", "L2": "O"}


@pytest.fixture(scope="module")
def task():
    return make_tagging_task(n_train=50, n_test=30, length=8, n_labels=3, n_informative=2, n_noise=2, seed=3)


def _bio(y):
    return [[BIO[t] for t in s] for s in y]


def _best(path):
    """Index of the best score, ties to the smaller C (the documented rule)."""
    cand = [i for i, s in enumerate(path["validation_score"]) if s is not None]
    return min(cand, key=lambda i: (-path["validation_score"][i], path["C"][i]))


# ------------------------------------------------------------------ the C parameter
def test_check_C_forms():
    assert check_C(10).values == (10.0,) and check_C(10).kind == "single"
    assert check_C([10]).kind == "single"
    assert check_C((1, 10, 100)) == ((1.0, 10.0, 100.0), "grid")
    assert check_C(np.array([1.0, 2.0])).kind == "grid"
    assert check_C("auto", auto_grid=(1, 2)) == ((1.0, 2.0), "auto")
    for bad, match in (
        ([], "empty"),
        ([1, 0], "C\\[1\\]"),
        ([1, -5], "> 0"),
        ([1, float("nan")], "finite"),
        ([10, 10], "duplicate"),
        ("1e3", "auto"),
        ([1, "2"], "real number"),
        (True, "real number"),
        (None, "real number"),
    ):
        with pytest.raises(InputError, match=match):
            check_C(bad)
    with pytest.raises(InputError, match="not available"):
        check_C("auto")  # no default grid (LinearSVM)


@pytest.mark.parametrize("C", [[], [1.0, 0.0], [1.0, 1.0], "often"])
def test_estimators_refuse_bad_grids(task, C):
    with pytest.raises(InputError) as err:
        SequenceTaggerCV(task.templates, Cs=C, validation_fraction=0.2).fit(task.X_train, task.y_train)
    assert err.value.field.startswith("Cs")
    X, y = make_binary(n_samples=60, n_features=4, n_test=0, seed=0)[:2]
    with pytest.raises(InputError):
        LinearSVM(C=C).fit(X, y, validation_fraction=0.2)


def test_linear_svm_has_no_auto_grid():
    data = make_binary(n_samples=60, n_features=4, n_test=10, seed=0)
    with pytest.raises(InputError, match="auto"):
        LinearSVM(C="auto").fit(data.X_train, data.y_train)


# ------------------------------------------------------------ the validation split
def test_holdout_split_is_seeded_and_whole():
    a = holdout_split(40, 0.25, 7)
    b = holdout_split(40, 0.25, 7)
    c = holdout_split(40, 0.25, 8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[1], c[1])
    keep, held = a
    assert len(held) == 10 and len(keep) == 30
    assert sorted(np.concatenate([keep, held]).tolist()) == list(range(40))
    assert np.all(np.diff(keep) > 0) and np.all(np.diff(held) > 0)
    assert len(holdout_split(2, 0.01, 0)[1]) == 1  # at least one held out
    assert len(holdout_split(3, 0.99, 0)[0]) == 1  # at least one kept
    with pytest.raises(InputError, match="at least 2"):
        holdout_split(1, 0.5, 0)


def test_validation_fraction_holds_out_whole_sentences_deterministically(task):
    X, y = task.X_train, task.y_train
    kw = dict(Cs=[1.0, 10.0], solver=CuttingPlane(eps=0.05))
    held_out = dict(kw, validation_fraction=0.2, validation_seed=5, refit=False)
    # refit=False: the model kept is the one trained on the sentences that were not held out
    one = SequenceTaggerCV(task.templates, **held_out).fit(X, y)
    two = SequenceTaggerCV(task.templates, **held_out).fit(X, y)
    assert one.path_["validation_score"] == two.path_["validation_score"]
    assert np.array_equal(one.coef_, two.coef_)
    assert one.validation_ == {
        "source": "fraction",
        "fraction": 0.2,
        "seed": 5,
        "n_examples": 10,
        "metric": "token_accuracy",
    }
    # the same as training on the kept sentences and validating on the held-out ones
    keep, held = holdout_split(len(X), 0.2, 5)
    ref = SequenceTaggerCV(task.templates, **kw).fit(
        [X[i] for i in keep], [y[i] for i in keep], validation_data=([X[i] for i in held], [y[i] for i in held])
    )
    assert np.array_equal(one.coef_, ref.coef_)
    assert one.path_["validation_score"] == ref.path_["validation_score"]
    other = SequenceTaggerCV(task.templates, **kw, validation_fraction=0.2, validation_seed=6).fit(X, y)
    assert other.validation_["seed"] == 6


class _FullScoring(SequenceTaggerCV):
    """The CV tagger with its scoring points certified to their eps as without a refit."""

    SCORING_RTOL = None


class _ColdRefit(_FullScoring):
    """:class:`_FullScoring` with a cold refit (the warm start off)."""

    WARM_REFIT = False


class _ColdCV(SequenceTaggerCV):
    """The CV tagger with a cold refit."""

    WARM_REFIT = False


def _certified_alike(a, b):
    """Two certified runs of one problem: both converged, objectives within the sum of the two
    gaps, each lower bound below the other's objective (up to rounding)."""
    slack = 1e-9 * max(1.0, abs(a.objective_))
    assert a.result_.status == b.result_.status == "converged"
    assert abs(a.objective_ - b.objective_) <= a.gap_ + b.gap_ + slack
    assert a.lower_bound_ <= b.objective_ + slack and b.lower_bound_ <= a.objective_ + slack


@pytest.mark.parametrize("regularizer", ["ssvm", "mtl"])
def test_scoring_points_stop_at_a_relative_gap_and_the_refit_is_certified(task, regularizer):
    """With a refit to follow, the scoring points stop at SCORING_RTOL (each reports the gap it
    had to reach, ``tolerance``, and reached it); the refit is certified to the chosen point's
    eps; with a tolerance of the user's the points keep it."""
    X, y = task.X_train, task.y_train
    # no pruning: the iteration counts then compare the scoring tolerance alone (which idle cuts
    # a pruned path drops, and so what the next point starts from, moves them by a few either way)
    kw = dict(Cs=[1.0, 10.0, 100.0], regularizer=regularizer, validation_fraction=0.2)
    kw["solver"] = CuttingPlane(prune_after=None)
    loose = SequenceTaggerCV(task.templates, **kw).fit(X, y)
    full = _FullScoring(task.templates, **kw).fit(X, y)
    path = loose.path_
    for obj, eps, tol, gap, status in zip(
        path["objective"], path["eps"], path["tolerance"], path["gap"], path["status"]
    ):
        assert status == "converged"
        assert tol == pytest.approx(max(eps, SequenceTaggerCV.SCORING_RTOL * abs(obj))) and gap <= tol * (1 + 1e-9)
    assert sum(path["n_iter"]) <= sum(full.path_["n_iter"])
    assert full.path_["tolerance"] == full.path_["eps"]
    eps = loose.path_["eps"][loose.best_index_]
    assert loose.result_.status == "converged" and loose.gap_ <= eps  # the refit: to eps, not to the scoring gap
    user = SequenceTaggerCV(task.templates, **dict(kw, solver=CuttingPlane(eps=0.05))).fit(X, y)
    assert user.path_["tolerance"] == user.path_["eps"]


def _same_selection(a, b):
    assert a.C_ == b.C_ and a.best_index_ == b.best_index_
    assert a.path_["validation_score"] == b.path_["validation_score"] and a.path_["C"] == b.path_["C"]


@pytest.mark.parametrize("regularizer", ["ssvm", "mtl"])
def test_refit_at_the_chosen_C_on_all_sentences(task, regularizer):
    """After a grid scored on held-out sentences the model is refitted at C_ on all of them: one
    run at C_ (with that point's tolerance) on the whole training set, certified; the selection
    (C_, path_) is the grid's: refit=False's when there is no feature cutoff (with one, the
    refit's path counts features over every training sentence). A cold refit is that run bit for
    bit; the default refit starts warm from the path's cuts and reaches the same certified optimum."""
    X, y = task.X_train, task.y_train
    kw = dict(Cs=[1.0, 10.0, 100.0], regularizer=regularizer)
    refit = _FullScoring(task.templates, **kw, validation_fraction=0.2).fit(X, y)  # every point to its eps
    cold = _ColdRefit(task.templates, **kw, validation_fraction=0.2).fit(X, y)
    kept = SequenceTaggerCV(task.templates, **kw, validation_fraction=0.2, refit=False).fit(X, y)
    _same_selection(refit, cold)  # one path, whether its refit starts warm or cold
    if regularizer == "ssvm":  # no feature cutoff: the refit's path (features of every sentence) is refit=False's
        _same_selection(refit, kept)
    assert refit.validation_["refit"] is True and refit.validation_["n_examples_refit"] == len(X)
    assert refit.validation_["refit_warm"] is True and cold.validation_["refit_warm"] is False
    assert "refit" not in kept.validation_
    eps = refit.path_["eps"][refit.best_index_]
    single = SequenceTagger(
        task.templates, C=refit.C_, regularizer=regularizer, solver=CuttingPlane(eps=eps, max_iter=1000)
    ).fit(X, y)
    np.testing.assert_array_equal(cold.coef_, single.coef_)
    assert cold.objective_ == single.objective_ and refit.gap_ <= eps
    _certified_alike(refit, single)
    assert refit.result_.status == "converged" and refit.lower_bound_ <= refit.objective_
    assert refit.feature_index_.n_features_ == single.feature_index_.n_features_
    # explicit validation data: nothing is held out of the training set, nothing to refit
    dev = SequenceTaggerCV(task.templates, **kw).fit(X, y, validation_data=(task.X_test, task.y_test))
    assert "refit" not in dev.validation_


def test_refit_linear_svm_and_parser():
    data = make_binary(n_samples=200, n_features=6, n_test=50, seed=4)
    clf = LinearSVM(C=[0.01, 1.0]).fit(data.X_train, data.y_train, validation_fraction=0.25)
    single = LinearSVM(C=clf.C_, solver=CuttingPlane(eps=clf.path_["eps"][clf.best_index_])).fit(
        data.X_train, data.y_train
    )
    np.testing.assert_array_equal(clf.coef_, single.coef_)
    assert clf.validation_["refit"] is True and clf.validation_["n_examples_refit"] == 200
    train = make_treebank(30, seed=0)
    est = DependencyParserCV(PARSE_TEMPLATES, Cs=[0.1, 10.0], regularizer="ssvm", validation_fraction=0.2).fit(train)
    one = DependencyParser(
        PARSE_TEMPLATES,
        C=est.C_,
        regularizer="ssvm",
        solver=CuttingPlane(eps=est.path_["eps"][est.best_index_], max_iter=1000),
    ).fit(train)
    np.testing.assert_array_equal(est.coef_, one.coef_)
    assert est.validation_["refit"] is True and est.validation_["n_examples_refit"] == 30


def test_refit_without_time_left_keeps_the_model_and_warns(task):
    import time

    from problems.model_selection import refit_at_chosen

    est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], validation_fraction=0.2, refit=False).fit(
        task.X_train, task.y_train
    )
    coef = est.coef_.copy()
    with pytest.warns(ConvergenceWarning, match="no time left to refit"):
        ran = refit_at_chosen(est, task.X_train, task.y_train, started=time.perf_counter() - 10.0, time_limit=1.0)
    assert ran is False and est.validation_["refit"] is False
    np.testing.assert_array_equal(est.coef_, coef)


# ------------------------------------------------------------------- the tagger
def test_tagger_grid_picks_the_best_validation_score(task):
    grid = [0.1, 1.0, 10.0, 100.0]
    est = SequenceTaggerCV(task.templates, Cs=grid, regularizer="ssvm", solver=CuttingPlane(eps=0.05)).fit(
        task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
    )
    path = est.path_
    assert set(path) == set(COLUMNS) | {"n_active_templates", "active_templates", "extension", "tolerance"}
    assert all(len(v) == len(grid) for v in path.values())
    assert path["C"] == grid
    assert est.best_index_ == _best(path) and est.C_ == grid[est.best_index_]
    assert len(set(path["validation_score"])) > 1  # the grid matters on this task
    # the model kept is the one at C_, and its score is the one in the table
    assert est.score(task.X_test, task.y_test) == pytest.approx(path["validation_score"][est.best_index_])
    assert est.objective_ == pytest.approx(path["objective"][est.best_index_])
    assert est.gap_ == pytest.approx(path["gap"][est.best_index_])
    for i in range(len(grid)):
        assert path["status"][i] == "converged"
        assert path["eps"][i] == pytest.approx(0.05)  # the user's eps is on F at every point
        assert path["lower_bound"][i] <= path["objective"][i]
        assert path["gap"][i] <= 0.05 * (1 + 1e-9)
        assert path["n_active_templates"][i] == len(path["active_templates"][i])
    assert est.path_result_ is not None and len(est.path_result_.results) == len(grid)
    assert est.validation_["metric"] == "token_accuracy" and est.validation_["source"] == "data"


def test_tagger_grid_scores_bio_tags_by_chunk_f1(task):
    y_tr, y_dev = _bio(task.y_train), _bio(task.y_test)
    assert is_chunk_tagset(["B-NP", "I-NP", "O"]) and not is_chunk_tagset(["B", "M", "E", "S"])
    est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0]).fit(task.X_train, y_tr, validation_data=(task.X_test, y_dev))
    assert est.validation_["metric"] == "chunk_f1"
    f1 = chunk_f1(y_dev, est.predict(task.X_test)).f1 / 100
    assert est.path_["validation_score"][est.best_index_] == pytest.approx(f1)


def test_a_grid_without_validation_data_holds_out_the_default_share(task):
    """The CV estimators always choose C on held-out data: without ``validation_data`` nor
    ``validation_fraction`` they hold out :data:`DEFAULT_VALIDATION_FRACTION`; LinearSVM, whose
    ``C`` takes a grid itself, still refuses a grid without validation data."""
    est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0]).fit(task.X_train, task.y_train)
    assert est.validation_["source"] == "fraction" and est.validation_["fraction"] == 0.1
    with pytest.raises(InputError, match="not both"):
        SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], validation_fraction=0.1).fit(
            task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
        )
    for bad in (0.0, 1.0, 1.5, "0.1"):
        with pytest.raises(InputError) as err:
            SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], validation_fraction=bad).fit(task.X_train, task.y_train)
        assert err.value.field == "validation_fraction"
    for name, bad in (("validation_seed", -1), ("refit", "yes")):
        with pytest.raises(InputError) as err:
            SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], **{name: bad}).fit(task.X_train, task.y_train)
        assert err.value.field == name
    with pytest.raises(InputError, match="validation_data"):
        SequenceTaggerCV(task.templates, Cs=[1.0, 10.0]).fit(task.X_train, task.y_train, validation_data=task.X_test)
    with pytest.raises(InputError, match="at least 2"):
        SequenceTaggerCV(task.templates).fit(task.X_train[:1], task.y_train[:1])  # "auto" holds out 10%
    data = make_binary(n_samples=60, n_features=4, n_test=10, seed=0)
    with pytest.raises(InputError, match="validation"):
        LinearSVM(C=[0.1, 1.0]).fit(data.X_train, data.y_train)
    trees = make_treebank(6, seed=0)
    with pytest.raises(InputError, match="at least 2"):
        DependencyParserCV(PARSE_TEMPLATES, Cs=[1.0, 10.0]).fit(trees[:1])


@pytest.mark.parametrize("C", [[1.0, 10.0], [10.0], "auto", np.array([1.0, 10.0])])
def test_the_plain_estimators_refuse_a_grid_naming_the_cv_estimator(task, C):
    with pytest.raises(InputError, match="SequenceTaggerCV\\(Cs=") as err:
        SequenceTagger(task.templates, C=C).fit(task.X_train, task.y_train)
    assert err.value.field == "C"
    with pytest.raises(InputError, match="DependencyParserCV\\(Cs=") as err:
        DependencyParser(PARSE_TEMPLATES, C=C).fit(make_treebank(6, seed=0))
    assert err.value.field == "C"


def test_single_C_is_one_run_as_before(task):
    kw = dict(solver=CuttingPlane(eps=0.05))
    one = SequenceTagger(task.templates, C=10.0, **kw).fit(task.X_train, task.y_train)
    scored = SequenceTaggerCV(task.templates, Cs=[10.0], **kw).fit(
        task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
    )
    for other in (scored,):
        assert np.array_equal(one.coef_, other.coef_)
        assert one.objective_ == other.objective_ and one.n_iter_ == other.n_iter_
    assert one.C_ == 10.0 and one.best_index_ == 0 and one.path_result_ is None
    assert one.path_["C"] == [10.0] and one.path_["validation_score"] == [None] and one.validation_ is None
    assert one.path_["eps"] == [0.05] and one.path_["objective"] == [one.objective_]
    assert scored.path_["validation_score"][0] == pytest.approx(scored.score(task.X_test, task.y_test))


def test_the_plain_fit_trains_one_model_at_a_number_C_on_all_sentences(task):
    """``SequenceTagger()``'s default C is a number (the measured default of
    ``docs/results/default_models.md``) and its fit trains one model on every sentence: nothing
    held out, no path; eps left None is 0.01 * C on F and max_iter 1000, a point of the CV path."""
    assert SequenceTagger(task.templates).get_params()["C"] == 10000.0
    assert DependencyParser().get_params()["C"] == 1000.0
    est = SequenceTagger(task.templates, C=100.0).fit(task.X_train, task.y_train)
    assert est.validation_ is None and est.path_result_ is None and est.path_["C"] == [100.0]
    assert est.path_["validation_score"] == [None] and est.C_ == 100.0
    assert est.solver_options_.eps == pytest.approx(1.0) and est.solver_options_.max_iter == 1000
    # trained on all 50 sentences: the same model as the cold CV refit at C = 100 with that point's
    # eps; the default (warm) refit reaches the same certified optimum
    cv = _ColdCV(task.templates, Cs=[1.0, 100.0], validation_fraction=0.2).fit(task.X_train, task.y_train)
    warm = SequenceTaggerCV(task.templates, Cs=[1.0, 100.0], validation_fraction=0.2).fit(task.X_train, task.y_train)
    assert warm.C_ == cv.C_
    if cv.C_ == 100.0:
        np.testing.assert_array_equal(cv.coef_, est.coef_)
        _certified_alike(warm, est)
    same = SequenceTagger(task.templates, C=100.0, solver=CuttingPlane(eps=1.0, max_iter=1000))
    np.testing.assert_array_equal(same.fit(task.X_train, task.y_train).coef_, est.coef_)
    assert est.feature_index_.n_features_ == same.feature_index_.n_features_


@pytest.mark.parametrize("regularizer", ["mtl", "ssvm"])
def test_auto_is_the_default_grid_on_a_held_out_fraction(task, regularizer):
    est = SequenceTaggerCV(task.templates, regularizer=regularizer).fit(task.X_train, task.y_train)
    assert SequenceTaggerCV(task.templates).get_params()["Cs"] == "auto"
    # the grid's points first, then those the path added past its edge (extend=2 by default)
    n = len(DEFAULT_C_GRIDS[regularizer])
    assert tuple(est.path_["C"][:n]) == DEFAULT_C_GRIDS[regularizer]
    assert est.path_["extension"] == [False] * n + [True] * (len(est.path_["C"]) - n)
    assert est.validation_["source"] == "fraction" and est.validation_["fraction"] == 0.1
    assert est.validation_["n_examples"] == 5
    assert est.C_ in est.path_["C"]
    # no eps given: 0.01 * C at each point (the engine's eps 0.01)
    assert est.path_["eps"] == pytest.approx([0.01 * C for C in est.path_["C"]])
    # auto with validation data uses them and holds nothing out
    dev = SequenceTaggerCV(task.templates, regularizer=regularizer).fit(
        task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
    )
    assert dev.validation_["source"] == "data" and dev.validation_["n_examples"] == len(task.X_test)


def test_unseen_validation_labels_are_scored_wrong_with_a_warning(task):
    y_dev = [["NEW" if t == "L0" else t for t in s] for s in task.y_test]
    with pytest.warns(UnseenLabelWarning, match="NEW"):
        est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0]).fit(
            task.X_train, task.y_train, validation_data=(task.X_test, y_dev)
        )
    assert all(s < 1.0 for s in est.path_["validation_score"])


def test_grid_with_spom_runs_once_per_C_cold(task):
    est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], solver=SPOM(epochs=3), extend=0).fit(
        task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
    )
    assert est.path_["lower_bound"] == [None, None] and est.path_["gap"] == [None, None]
    assert est.path_["n_iter"] == [3, 3] and est.path_result_ is None
    assert est.lower_bound_ is None and est.C_ == est.path_["C"][_best(est.path_)]
    assert est.score(task.X_test, task.y_test) == pytest.approx(est.path_["validation_score"][est.best_index_])


def test_time_limit_is_for_the_whole_grid(task):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0, 100.0], solver=CuttingPlane(time_limit=1e-3)).fit(
            task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
        )
    assert "not_run" in est.path_["status"]
    assert est.path_["validation_score"][est.best_index_] is not None
    assert any(issubclass(w.category, ConvergenceWarning) and "not_run" in str(w.message) for w in caught)


def test_a_grid_refuses_a_checkpoint(task, tmp_path):
    with pytest.raises(InputError, match="one C"):
        SequenceTaggerCV(
            task.templates, Cs=[1.0, 10.0], solver=CuttingPlane(checkpoint=tmp_path / "c.ckpt"), validation_fraction=0.2
        ).fit(task.X_train, task.y_train)


def test_callback_sees_the_running_C(task):
    lams = set()

    def cb(info):
        lams.add(info.lam)

    est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], validation_fraction=0.2)
    est.fit(task.X_train, task.y_train, callback=cb)
    assert {1.0, 0.1} <= lams  # and the points the path added past the grid's edge, if any
    assert lams == {1.0 / C for C in est.path_["C"]}


def test_clone_and_grid_search(task):
    est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], solver=CuttingPlane(eps=0.1), validation_fraction=0.25)
    twin = clone(est)
    assert twin.get_params()["Cs"] == [1.0, 10.0] and twin.get_params()["solver__eps"] == 0.1
    assert twin.get_params()["validation_fraction"] == 0.25 and twin.get_params()["refit"] is True
    search = GridSearchCV(est, {"regularizer": ["ssvm", "mtl"]}, cv=2)
    search.fit(task.X_train, task.y_train)
    assert search.best_estimator_.C_ in (1.0, 10.0)
    data = make_binary(n_samples=120, n_features=5, n_test=0, seed=1)
    svm = GridSearchCV(LinearSVM(), {"C": [0.1, 1.0]}, cv=2).fit(data.X_train, data.y_train)
    assert svm.best_estimator_.C_ == svm.best_params_["C"]


# ----------------------------------------------------------------- model files
def test_path_models_save_and_load(task, tmp_path):
    est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0]).fit(
        task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
    )
    est.save(tmp_path / "m.npz")
    back = SequenceTaggerCV.load(tmp_path / "m.npz")
    assert type(back) is SequenceTaggerCV and type(SequenceTagger.load(tmp_path / "m.npz")) is SequenceTaggerCV
    assert back.Cs == [1.0, 10.0] and back.C_ == est.C_ and back.best_index_ == est.best_index_
    assert back.path_ == est.path_ and back.validation_ == est.validation_
    assert back.predict(task.X_test) == est.predict(task.X_test)
    single = SequenceTagger(task.templates, C=3.0).fit(task.X_train, task.y_train)
    single.save(tmp_path / "s.npz")
    assert SequenceTagger.load(tmp_path / "s.npz").path_ == single.path_
    assert type(SequenceTaggerCV.load(tmp_path / "s.npz")) is SequenceTagger  # the class that wrote it
    # a file written before C grids (no C_, path, validation) still loads: C_ is its C
    arrays, meta = load_model(tmp_path / "s.npz")
    old = {k: v for k, v in meta.items() if k not in ("C_", "path", "validation", "arrays", "format", "format_version")}
    save_model(tmp_path / "old.npz", arrays, old)
    loaded = SequenceTagger.load(tmp_path / "old.npz")
    assert loaded.C_ == 3.0 and loaded.path_ is None and loaded.validation_ is None
    assert loaded.predict(task.X_test) == single.predict(task.X_test)


def test_linear_svm_grid(tmp_path):
    data = make_binary(n_samples=300, n_features=8, n_test=200, seed=2)
    grid = [0.001, 0.1, 10.0]
    clf = LinearSVM(C=grid).fit(data.X_train, data.y_train, validation_data=(data.X_test, data.y_test))
    assert clf.path_["C"] == grid and set(clf.path_) == set(COLUMNS)
    assert clf.best_index_ == _best(clf.path_) and clf.C_ == grid[clf.best_index_]
    assert clf.score(data.X_test, data.y_test) == pytest.approx(clf.path_["validation_score"][clf.best_index_])
    assert clf.path_["eps"] == pytest.approx([1e-3 * C for C in grid])
    cold = LinearSVM(C=clf.C_, solver=CuttingPlane(eps=1e-3 * clf.C_)).fit(data.X_train, data.y_train)
    assert abs(cold.objective_ - clf.objective_) <= 2e-3 * clf.C_  # both certified within eps
    frac = LinearSVM(C=grid).fit(data.X_train, data.y_train, validation_fraction=0.25, validation_seed=1)
    assert frac.validation_["n_examples"] == 75
    clf.save(tmp_path / "svm.npz")
    back = LinearSVM.load(tmp_path / "svm.npz")
    assert back.C_ == clf.C_ and back.path_ == clf.path_
    assert np.array_equal(back.predict(data.X_test), clf.predict(data.X_test))


def test_parser_grid(tmp_path):
    train, dev = make_treebank(30, seed=0), make_treebank(15, seed=1)
    est = DependencyParserCV(PARSE_TEMPLATES, Cs=[0.1, 1.0, 10.0], regularizer="ssvm").fit(train, validation_data=dev)
    assert est.validation_["metric"] == "uas" and est.best_index_ == _best(est.path_)
    assert est.score(dev) == pytest.approx(est.path_["validation_score"][est.best_index_])
    assert est.objective_ == pytest.approx(est.path_["objective"][est.best_index_])
    pair = DependencyParserCV(PARSE_TEMPLATES, Cs=[0.1, 1.0, 10.0], regularizer="ssvm").fit(
        train, validation_data=(dev, None)
    )
    assert pair.path_["validation_score"] == est.path_["validation_score"]
    auto = DependencyParserCV(PARSE_TEMPLATES).fit(train)
    assert tuple(auto.path_["C"]) == DEFAULT_C_GRIDS["mtl"] and auto.validation_["n_examples"] == 3
    auto.save(tmp_path / "p.npz")
    back = DependencyParser.load(tmp_path / "p.npz")
    assert type(back) is DependencyParserCV and back.Cs == "auto"
    assert back.C_ == auto.C_ and back.path_ == auto.path_
    with pytest.raises(InputError, match="validation_data"):
        DependencyParserCV(PARSE_TEMPLATES, Cs=[1.0, 10.0]).fit(train, validation_data=[object()])


def test_refit_uses_the_users_executor_instance(task):
    """The refit runs with the executor instance the user passed (not a deep copy of it), and the
    instance stays open for the user."""
    from cutplane.executors import get_executor

    executor = get_executor("threads", 2)
    seen = []
    original_map = executor.map

    def counting_map(*args, **kwargs):
        seen.append(True)
        return original_map(*args, **kwargs)

    executor.map = counting_map
    try:
        solver = CuttingPlane(executor=executor)
        held_out = dict(Cs=[1.0, 10.0], regularizer="ssvm", validation_fraction=0.2)
        est = SequenceTaggerCV(task.templates, solver=solver, **held_out)
        est.fit(task.X_train, task.y_train)
        assert est.validation_["refit"] is True and est.solver.executor is executor
        n_path = sum(est.path_["n_iter"])
        assert len(seen) >= n_path + est.n_iter_  # the path's oracle calls and the refit's went through it
        plain = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], regularizer="ssvm", validation_fraction=0.2).fit(
            task.X_train, task.y_train
        )
        # the same certified optimum as the serial run (threads only change the summation order)
        assert est.C_ == plain.C_
        assert abs(est.objective_ - plain.objective_) <= est.path_["eps"][est.best_index_] + plain.gap_
    finally:
        executor.close()
