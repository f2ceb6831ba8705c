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
def test_the_path_keeps_the_best_point_and_the_last_one(task, regularizer):
    cv = SequenceTaggerCV(
        task.templates, Cs=[0.1, 1.0, 10.0, 100.0], regularizer=regularizer, solver=CuttingPlane(eps=0.1)
    ).fit(task.X_train, task.y_train, validation_data=(task.X_test, task.y_test))
    path = cv.path_result_
    last = path.run_order[-1]
    kept = {i for i, r in enumerate(path.results) if r is not None and r.w is not None}
    assert kept == {cv.best_index_, last}
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
