"""The memory a grid search holds: the CV estimators keep the model of the best scoring point
(and the running one), not one per C, and the models are not copied; a run the native QCQP
solver answers does not import cvxpy."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from problems.sequence import SequenceTaggerCV
from problems.solvers import CuttingPlane
from problems.synthetic import make_tagging_task


@pytest.fixture(scope="module")
def task():
    return make_tagging_task(n_train=40, n_test=10, length=6, n_labels=3, n_informative=2, n_noise=1, seed=5)


@pytest.mark.parametrize("regularizer", ["mtl", "ssvm"])
def test_only_the_chosen_points_model_is_kept(task, regularizer):
    """While the path runs it keeps the best point and the running one (``keep``); once it has
    ended the chosen point's model alone is kept (the last point's is let go before a refit)."""
    cv = SequenceTaggerCV(
        task.templates, Cs=[0.1, 1.0, 10.0, 100.0], regularizer=regularizer, solver=CuttingPlane(eps=0.1)
    ).fit(task.X_train, task.y_train, validation_data=(task.X_test, task.y_test))
    path = cv.path_result_
    kept = {i for i, r in enumerate(path.results) if r is not None and r.w is not None}
    assert kept == {cv.best_index_}
    # the certificates of the points let go are whole
    for r in path.results:
        assert r is not None and r.lower_bound <= r.objective and np.isfinite(r.gap)
    # the model is the best point's w, not a copy of it
    assert cv.result_ is path.results[cv.best_index_]
    assert cv.coef_ is cv.result_.w
    assert cv.score(task.X_test, task.y_test) == pytest.approx(cv.path_["validation_score"][cv.best_index_])


def test_a_native_qcqp_run_does_not_import_cvxpy():
    code = textwrap.dedent(
        """
        import sys
        from problems.sequence import SequenceTagger
        from problems.synthetic import make_tagging_task
        task = make_tagging_task(n_train=30, n_test=5, length=5, n_labels=3, n_informative=2, n_noise=1, seed=1)
        est = SequenceTagger(task.templates, C=10.0, regularizer="mtl").fit(task.X_train, task.y_train)
        assert est.result_.backend is not None and est.result_.status == "converged"
        print("cvxpy" in sys.modules, est.result_.backend)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported, backend = out.stdout.split()
    assert imported == "False", f"cvxpy was imported (backend {backend})"


def test_path_run_keep_only_lets_go_of_the_other_models():
    """``PathRun.keep_only``: engine points lose ``w`` in their shared ``Result``; SPOM points are
    replaced by ones without ``w`` / ``w_last``; the point kept and the certificates are untouched."""
    import dataclasses

    from problems.solvers import PathRun, TrainedPoint

    @dataclasses.dataclass
    class Res:
        w: object
        objective: float = 1.0
        w_last: object = None

    def point(res):
        return TrainedPoint(C=1.0, result=res, n_iter=1, objective=1.0, lower_bound=0.5, gap=0.5, eps=1.0, mu=None)

    engine = [Res(np.ones(3)) for _ in range(3)]
    run = PathRun(points=[point(r) for r in engine] + [None], path_result=object())
    run.keep_only(1)
    assert [r.w is None for r in engine] == [True, False, True]
    assert run.points[1].coef is engine[1].w and run.points[0].objective == 1.0

    spom = [Res(np.ones(3), w_last=np.zeros(3)) for _ in range(3)]
    run = PathRun(points=[point(r) for r in spom])
    run.keep_only(2)
    assert [p.result.w is None and p.result.w_last is None for p in run.points] == [True, True, False]
    assert run.points[2].result is spom[2]
