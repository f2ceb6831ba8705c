"""The native QCQP path with group generation against direct solves of the reduced primal.

The reduced solver of ``MixedNorm(p=1)`` solves the native interior point over a few groups
(the ones that bound at the previous solve, the largest at the warm start) and adds the
violated ones; these tests drive it through growing working sets with many groups, few of them
binding, so that the restricted rounds, the additions and the carried-over binding set are all
exercised, and check every solve against cvxpy on the full problem.
"""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import Cut
from cutplane.reduced.qcqp import QCQPReducedSolver
from cutplane.regularizers import MixedNorm
from cutplane.working_set import WorkingSet


def _instance(seed, m, dim_per_group=3, n_cuts=12):
    """Cuts whose slopes are large on a few groups and small elsewhere (so few groups bind)."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(m), dim_per_group)
    scale = np.where(rng.random(m) < 0.2, 1.0, 0.05)[groups]
    A = rng.standard_normal((n_cuts, groups.size)) * scale
    A[rng.random(A.shape) < 0.3] = 0.0
    b = rng.uniform(0.0, 2.0, size=n_cuts)
    return groups, A, b


def _direct(reg, A, b, lam):
    w = cp.Variable(A.shape[1])
    prob = cp.Problem(cp.Minimize(lam * reg.cvx_term(w) + cp.max(A @ w + b)))
    prob.solve(solver="CLARABEL")
    return prob.value


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    m=st.integers(6, 30),
    initial=st.sampled_from([1, 4]),
    lam=st.sampled_from([0.05, 0.5, 5.0]),
)
def test_every_solve_of_a_growing_working_set_is_the_full_optimum(seed, m, initial, lam):
    groups, A, b = _instance(seed, m)
    reg = MixedNorm(groups, p=1.0, n_groups=m)
    solver = QCQPReducedSolver(reg, initial_groups=initial)
    ws = WorkingSet(A.shape[1], groups=groups)
    alpha = None
    for r in range(A.shape[0]):
        ws.add(Cut(sp.csr_matrix(A[r][None, :]), float(b[r])))
        warm = None if alpha is None else np.append(alpha, 0.0)
        sol = solver.solve(ws, lam, warm_start=warm)
        alpha = sol.alpha
        assert sol.failures == ()
        opt = _direct(reg, A[: r + 1], b[: r + 1], lam)
        size = max(1.0, abs(opt))
        assert sol.lower_bound <= opt + 1e-6 * size  # a lower bound of the full problem
        assert sol.lower_bound == pytest.approx(opt, rel=1e-5, abs=1e-6)
        assert sol.mu.shape == (m,) and np.all(sol.mu >= 0)
        assert sol.mu.sum() == pytest.approx(1.0, abs=1e-6)
        # w from eq. (7) attains the optimum of the reduced primal
        value = lam * reg(sol.w) + float(np.max(A[: r + 1] @ sol.w + b[: r + 1]))
        assert value == pytest.approx(opt, rel=1e-4, abs=1e-6)


def test_restricted_rounds_add_the_violated_groups():
    """From a single starting group, the answer needs groups outside it: the first restricted
    optimum violates them and the solver must add them (checked on its binding set)."""
    groups, A, b = _instance(7, 20, n_cuts=10)
    A[:, groups >= 10] *= 20.0  # the large groups are all among the last ten
    reg = MixedNorm(groups, p=1.0, n_groups=20)
    ws = WorkingSet(A.shape[1], groups=groups)
    for a, off in zip(A, b):
        ws.add(Cut(sp.csr_matrix(a[None, :]), float(off)))
    solver = QCQPReducedSolver(reg, initial_groups=1)
    sol = solver.solve(ws, 0.3)
    opt = _direct(reg, A, b, 0.3)
    assert sol.lower_bound == pytest.approx(opt, rel=1e-6, abs=1e-7)
    assert len(solver._binding) > 1  # more than the one group it started from binds
    assert np.count_nonzero(sol.mu > 1e-6) == len(solver._binding)


def test_a_failed_restricted_round_retries_every_group_before_the_cone_programs(monkeypatch):
    """A restricted native solve that is not certified (it happened on a CoNLL-2000 refit: 10 of
    22 groups, gap 0.09 after 9 steps, then minutes in Clarabel over 236 cuts) is retried over
    every active group; only when that fails too do the conic backends run."""
    from cutplane.reduced.qcqp import native

    groups, A, b = _instance(11, 12, n_cuts=10)
    reg = MixedNorm(groups, p=1.0, n_groups=12)
    ws = WorkingSet(A.shape[1], groups=groups)
    for a, off in zip(A, b):
        ws.add(Cut(sp.csr_matrix(a[None, :]), float(off)))
    real = native.solve_qcqp_native
    sizes = []

    def fails_when_restricted(grams, b, lam, **kw):
        sizes.append(len(grams))
        res = real(grams, b, lam, **kw)
        return res._replace(converged=False, gap=1.0) if len(grams) < 12 else res

    monkeypatch.setattr(native, "solve_qcqp_native", fails_when_restricted)
    sol = QCQPReducedSolver(reg, initial_groups=1).solve(ws, 0.3)
    assert sizes[0] < 12 and sizes[-1] == 12  # a restricted round first, then every group
    assert sol.backend == "NATIVE-IPM"  # no cone program
    assert sol.lower_bound == pytest.approx(_direct(reg, A, b, 0.3), rel=1e-6, abs=1e-7)
    assert any("not certified" in why for _, why in sol.failures)  # the failed round is reported

    def always_fails(grams, b, lam, **kw):
        return real(grams, b, lam, **kw)._replace(converged=False, gap=1.0)

    monkeypatch.setattr(native, "solve_qcqp_native", always_fails)
    sol = QCQPReducedSolver(reg, initial_groups=1).solve(ws, 0.3)
    assert sol.backend != "NATIVE-IPM"  # the conic fallback answered
    assert sol.lower_bound == pytest.approx(_direct(reg, A, b, 0.3), rel=1e-5, abs=1e-6)
