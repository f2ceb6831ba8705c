"""SequenceTagger(solver=SPOM(...)) against MTL^struct's certificate on a generated task, and
``cutplane compare`` end to end (the per-sentence oracle SPOM reads is tested in
tests/oracles/test_sequence_examples.py)."""

import json

import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems.cli.main import main
from problems.sequence.tagger import SequenceTagger
from problems.solvers import SPOM, CuttingPlane
from problems.synthetic import make_tagging_task


@pytest.fixture(scope="module")
def task():
    # 2 informative and 4 noise columns; MTL^struct keeps few templates at C = 1
    return make_tagging_task(
        n_train=300, n_test=60, length=10, n_labels=3, n_informative=2, n_noise=4, signal=0.6, seed=1
    )


@pytest.fixture(scope="module")
def mtl(task):
    # eps = 0.002 on F ~ 5.6: the certified lower bound is within 0.04% of the optimum
    return SequenceTagger(task.templates, C=1.0, regularizer="mtl", solver=CuttingPlane(eps=0.002)).fit(
        task.X_train, task.y_train
    )


def test_spom_reaches_one_percent_of_the_certified_optimum(task, mtl):
    lb = mtl.lower_bound_
    assert mtl.gap_ <= 0.002 and lb > 0
    # eta0 = 0.1: the value the tuning rule (seed 000, Table 1: the grid {0.01, 0.1, 1, 10}, best
    # objective after a few epochs) picks on this task
    sp = SequenceTagger(
        task.templates, C=1.0, regularizer="mtl", solver=SPOM(epochs=40, eta0=0.1, averaged=True, seed=0)
    ).fit(task.X_train, task.y_train)
    res = sp.result_
    F = 1.0 * res.history.objective  # C = 1: F / C = F
    assert sp.objective_ == pytest.approx(F[-1])
    assert np.all(F >= lb - 1e-9)  # nothing beats the certificate
    rel = (F - lb) / lb
    assert rel[-1] <= 0.01, rel[[1, 10, 20, 40]]
    # averaged model, regret-bound behaviour: gap at T and 4T epochs shrinks by ~2 (1/sqrt(T))
    assert rel[10] / rel[40] >= 1.5, rel[[10, 40]]
    # same F: SPOM's objective is MTL's objective function at SPOM's weights
    assert sp.lower_bound_ is None and sp.gap_ is None
    mu = np.array(list(sp.template_weights_.values()))
    assert mu.sum() == pytest.approx(1.0) and np.all(mu >= 0)
    assert sp.n_iter_ == 40


def test_spom_tagger_is_seeded_and_round_trips(task, tmp_path):
    kw = dict(epochs=2, eta0=0.1)
    a = SequenceTagger(task.templates, C=1.0, solver=SPOM(seed=5, **kw)).fit(task.X_train[:60], task.y_train[:60])
    b = SequenceTagger(task.templates, C=1.0, solver=SPOM(seed=5, **kw)).fit(task.X_train[:60], task.y_train[:60])
    c = SequenceTagger(task.templates, C=1.0, solver=SPOM(seed=6, **kw)).fit(task.X_train[:60], task.y_train[:60])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)
    path = a.save(tmp_path / "spom.npz")
    back = SequenceTagger.load(path)
    assert back.solver == SPOM(seed=5, **kw) and back.lower_bound_ is None
    assert back.predict(task.X_test[:5]) == a.predict(task.X_test[:5])


def test_solver_option_is_validated(task):
    with pytest.raises(InputError, match="solver=CuttingPlane"):
        SequenceTagger(task.templates, solver="CLARABEL").fit(task.X_train[:5], task.y_train[:5])
    with pytest.raises(InputError, match="epochs"):
        SequenceTagger(task.templates, solver=SPOM(epochs=0)).fit(task.X_train[:5], task.y_train[:5])
    with pytest.raises(InputError, match="SPOM"):  # the keyword's old meaning names the new form
        SequenceTagger(task.templates, solver="spom").fit(task.X_train[:5], task.y_train[:5])


def _write(path, X, y):
    from problems.io.conll import write_columns

    write_columns(path, [[row + (lab,) for row, lab in zip(x, ys)] for x, ys in zip(X, y)])


def test_compare_command_end_to_end(task, tmp_path, capsys):
    train, test, tpl = tmp_path / "train.txt", tmp_path / "test.txt", tmp_path / "t.tpl"
    _write(train, task.X_train[:60], task.y_train[:60])
    _write(test, task.X_test[:20], task.y_test[:20])
    tpl.write_text(task.templates)
    report, out = tmp_path / "R.json", tmp_path / "figs"
    code = main(
        [
            "compare",
            "--task",
            "sequence",
            "--templates",
            str(tpl),
            "--train",
            str(train),
            "--test",
            str(test),
            "--C",
            "1",
            "--eps",
            "0.01",
            "--epochs",
            "4",
            "--eta0",
            "0.1",
            "--report",
            str(report),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    rep = json.loads(report.read_text())
    m, s = rep["methods"]["mtl"], rep["methods"]["spom"]
    assert rep["n_train_sentences"] == 60 and rep["n_test_sentences"] == 20 and rep["metric"] == "accuracy"
    assert rep["target_objective"] == m["objective"]
    assert m["lower_bound"] <= m["objective"] and m["gap"] <= 0.01 and m["status"] == "converged"
    assert m["time_to_target_s"] is not None and m["time_to_target_s"] <= m["train_time_s"] + 1e-9
    assert s["objective"] >= m["lower_bound"] - 1e-9
    assert len(s["curve"]["objective"]) == 5 and s["curve"]["passes"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert s["curve"]["objective"][-1] == pytest.approx(s["objective"])
    assert len(m["curve"]["objective"]) == m["iterations"]
    assert m["curve"]["objective"][-1] == pytest.approx(m["objective"])
    if s["reached_target"]:
        assert rep["time_ratio"] == pytest.approx(s["time_to_target_s"] / m["time_to_target_s"])
    else:
        assert s["time_to_target_s"] is None and rep["time_ratio_kind"].startswith("lower bound")
    for meth in (m, s):
        assert 0.0 <= meth["test_metric"] <= 100.0
        assert 0.0 < meth["cpu_time_s"] < 2.0 * meth["wall_time_s"] + 1.0  # serial here: about the wall time
        assert meth["sparsity"]["n_active"] + meth["sparsity"]["n_inactive"] == meth["sparsity"]["n_templates"]
    md = report.with_suffix(".md").read_text()
    assert "| final objective F |" in md and f"{m['objective']:.6g}" in md
    # the page says how it was produced: the exact command line
    assert rep["command"].startswith("cutplane compare --task sequence --templates ")
    assert f"--report {report}" in rep["command"] and f"Produced by `{rep['command']}`" in md
    pytest.importorskip("matplotlib")
    names = sorted(p.name for p in out.iterdir())
    assert names == ["objective_vs_passes.png", "objective_vs_time.png", "test_metric_vs_time.png"]
    assert all((out / n).stat().st_size > 1000 for n in names)
    assert "final objective" in capsys.readouterr().out


def test_compare_command_bad_input(tmp_path, capsys):
    code = main(
        [
            "compare",
            "--task",
            "sequence",
            "--templates",
            "chunking",
            "--train",
            str(tmp_path / "nope.txt"),
            "--test",
            str(tmp_path / "nope.txt"),
            "--C",
            "1",
        ]
    )
    assert code == 2
    assert "nope.txt" in capsys.readouterr().err
