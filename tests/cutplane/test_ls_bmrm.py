"""LS-BMRM (chapter Alg. 1.4) and the native simplex-QP backend, against direct cvxpy solves.

LS-BMRM must reach the optimum certified by a direct solve and the one BMRM reaches, with the
exact line search (form-16 oracles) and with the generic search (any oracle, any regulariser);
its bounds must stay a faithful certificate. The native active-set solver of the reduced QP
is checked against cvxpy on random, rank-deficient and duplicated working sets.
"""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import minimize
from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from cutplane.reduced import backends as bk
from cutplane.reduced.qp import QPReducedSolver
from cutplane.reduced.simplex_qp import solve_simplex_qp
from cutplane.regularizers import L1, L2
from cutplane.steps import LineSearchStep
from cutplane.working_set import WorkingSet
from oracles.linear import BinaryHinge, MulticlassHinge


class GenericHinge:
    """Binary hinge risk without ``line_search_pieces``: LS-BMRM must use the generic search."""

    risk_lower_bound = 0.0

    def __init__(self, X, y):
        self.X, self.y, self.dim = X, y, X.shape[1]
        self.calls = 0

    def __call__(self, w):
        self.calls += 1
        m = 1.0 - self.y * (self.X @ w)
        act = m > 0
        val = float(np.maximum(m, 0.0).mean())
        a = -(self.y[act, None] * self.X[act]).sum(axis=0) / len(self.y)
        return OracleResult(val, Cut(a, val - float(a @ w)))


def binary_data(seed, n, dim, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dim))
    y = np.sign(X @ rng.standard_normal(dim) + noise * rng.standard_normal(n))
    y[y == 0] = 1.0
    return X, y


def cvx_hinge(X, y, lam, l1=False):
    w = cp.Variable(X.shape[1])
    reg = cp.norm1(w) if l1 else 0.5 * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(lam * reg + cp.sum(cp.pos(1 - cp.multiply(y, X @ w))) / len(y)))
    prob.solve(solver="CLARABEL")
    return prob.value


def check_certificate(res, F, eps):
    """The certificate of a converged run: bounds, monotonicity, the returned point's value."""
    h = res.history
    assert res.status == "converged" and res.gap <= eps
    assert res.objective == pytest.approx(F(res.w), abs=1e-9 * max(1.0, abs(res.objective)))
    # the engine's convention (tests/cutplane/test_engine.py): the lower bound may be clipped to a
    # new best upper bound that undercuts it by round-off, never by more
    assert np.all(np.diff(h.lower) >= -1e-12 * (1 + np.abs(h.lower[1:])))
    assert np.all(np.diff(h.best_upper) <= 0)
    assert np.all(h.lower <= h.best_upper)
    # the best upper bound is exactly the running minimum of the evaluated F: oracle points and
    # line-search points
    np.testing.assert_array_equal(h.best_upper, np.minimum.accumulate(np.fmin(h.upper, h.line_search_value)))
    ls = h.line_search_value[np.isfinite(h.line_search_value)]
    assert np.all(ls >= res.lower_bound - 1e-9)  # every evaluated F is above the lower bound
    assert res.lower_bound <= res.objective


@settings(max_examples=15)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(5, 80),
    dim=st.integers(1, 12),
    lam=st.sampled_from([1e-3, 1e-2, 0.1, 1.0]),
)
def test_ls_bmrm_exact_search_matches_cvxpy_and_bmrm(seed, n, dim, lam):
    X, y = binary_data(seed, n, dim)
    eps = 1e-7
    oracle = BinaryHinge(X, y)

    def F(w):
        return 0.5 * lam * float(w @ w) + oracle(w).value

    ref = cvx_hinge(X, y, lam)
    ls = minimize(oracle, L2(), lam, method="ls-bmrm", eps=eps, max_iter=3000)
    bm = minimize(oracle, L2(), lam, method="bmrm", eps=eps, max_iter=3000)
    for res in (ls, bm):
        check_certificate(res, F, eps)
        assert res.lower_bound <= ref + 1e-7 and res.objective >= ref - 1e-7
        assert res.objective == pytest.approx(ref, abs=eps + 1e-7)
    assert abs(ls.objective - bm.objective) <= eps  # the same optimum, both certified
    assert ls.n_line_searches >= ls.n_iter - 1 and ls.n_oracle_calls == ls.n_iter  # exact: no extra calls
    assert bm.n_line_searches == 0 and bm.n_oracle_calls == bm.n_iter


@settings(max_examples=8)
@given(seed=st.integers(0, 2**31), n=st.integers(6, 50), dim=st.integers(1, 5), k=st.integers(3, 5))
def test_ls_bmrm_multiclass_matches_cvxpy(seed, n, dim, k):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dim))
    y = rng.integers(0, k, n)
    lam, eps = 0.05, 1e-7
    oracle = MulticlassHinge(X, y, n_classes=k)
    res = minimize(oracle, L2(), lam, method="ls-bmrm", eps=eps, max_iter=3000)
    W = cp.Variable((k, dim))
    S = X @ W.T
    onehot = np.eye(k)[y]
    aug = S + (1 - onehot) - cp.reshape(cp.sum(cp.multiply(S, onehot), axis=1), (n, 1), order="C")
    prob = cp.Problem(cp.Minimize(0.5 * lam * cp.sum_squares(W) + cp.sum(cp.max(aug, axis=1)) / n))
    prob.solve(solver="CLARABEL")
    check_certificate(res, lambda w: 0.5 * lam * float(w @ w) + oracle(w).value, eps)
    assert res.objective == pytest.approx(prob.value, abs=eps + 1e-6)


@settings(max_examples=10)
@given(seed=st.integers(0, 2**31), n=st.integers(5, 60), dim=st.integers(1, 8), lam=st.sampled_from([1e-2, 0.1, 1.0]))
def test_ls_bmrm_generic_search_with_a_plain_oracle(seed, n, dim, lam):
    X, y = binary_data(seed, n, dim)
    eps = 1e-6
    oracle = GenericHinge(X, y)
    res = minimize(oracle, L2(), lam, method="ls-bmrm", eps=eps, max_iter=3000)
    check_certificate(res, lambda w: 0.5 * lam * float(w @ w) + GenericHinge(X, y)(w).value, eps)
    assert res.objective == pytest.approx(cvx_hinge(X, y, lam), abs=eps + 1e-7)
    # the generic search evaluates F through the oracle, and every call is counted
    assert res.n_oracle_calls == oracle.calls
    if res.n_line_searches:
        assert res.n_oracle_calls > res.n_iter


def test_ls_bmrm_generic_search_with_l1():
    X, y = binary_data(3, 60, 6)
    lam, eps = 0.05, 1e-6
    oracle = GenericHinge(X, y)
    res = minimize(oracle, L1(), lam, method="ls-bmrm", eps=eps, max_iter=2000)
    F = lambda w: lam * float(np.abs(w).sum()) + GenericHinge(X, y)(w).value  # noqa: E731
    check_certificate(res, F, eps)
    assert res.objective == pytest.approx(cvx_hinge(X, y, lam, l1=True), abs=eps + 1e-7)


def test_ls_bmrm_needs_fewer_iterations_on_a_noisy_problem():
    """Not a theorem, but the point of the method (chapter sec. 1.2.2): checked on a fixed instance."""
    X, y = binary_data(0, 3000, 40, noise=1.0)
    lam = 1.0 / 3000  # liblinear C = 1
    oracle = BinaryHinge(X, y)
    ls = minimize(oracle, L2(), lam, method="ls-bmrm", eps=1e-6, max_iter=3000)
    bm = minimize(oracle, L2(), lam, method="bmrm", eps=1e-6, max_iter=3000)
    assert ls.converged and bm.converged and abs(ls.objective - bm.objective) <= 1e-6
    assert 2 * ls.n_iter < bm.n_iter


def test_theta_validation_and_effect():
    for bad in (0, 0.0, -0.1, 1.01, np.inf, "0.1", True):
        with pytest.raises(InputError) as err:
            LineSearchStep(bad)
        assert err.value.field == "theta"
    X, y = binary_data(1, 200, 5)

    class Spy(BinaryHinge):
        calls = 0

        def __call__(self, w):
            Spy.calls += 1
            return super().__call__(w)

    ref = minimize(BinaryHinge(X, y), L2(), 0.01, method="ls-bmrm", eps=1e-7)
    res = minimize(Spy(X, y), L2(), 0.01, method="ls-bmrm", theta=1.0, eps=1e-7)
    assert res.converged and ref.converged and abs(res.objective - ref.objective) <= 1e-7
    assert Spy.calls == res.n_iter == res.n_oracle_calls  # the exact search makes no oracle call


# ---------------------------------------------------------------- native simplex QP
def cvx_simplex_qp(H, c):
    a = cp.Variable(len(c), nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(H)) - c @ a), [cp.sum(a) == 1])
    prob.solve(solver="CLARABEL")
    return prob.value


@settings(max_examples=60)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 40),
    dim=st.integers(1, 12),
    lam=st.sampled_from([1e-4, 1e-2, 1.0, 10.0]),
    dup=st.booleans(),
    warm=st.booleans(),
)
def test_native_simplex_qp_matches_cvxpy(seed, n, dim, lam, dup, warm):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, dim)) * (rng.random((n, dim)) < 0.6)
    if dup and n > 1:
        A[n // 2 :] = A[: n - n // 2]  # duplicated slopes: a singular Gram matrix
    c = rng.standard_normal(n)
    H = A @ A.T / lam
    res = solve_simplex_qp(H, c, rng.random(n) if warm else None)
    ref = cvx_simplex_qp(H, c)
    a = res.alpha
    assert res.converged and np.all(a >= 0) and a.sum() == pytest.approx(1.0)
    value = 0.5 * a @ H @ a - c @ a
    assert res.value == pytest.approx(value, abs=1e-9 * (1 + abs(value)))
    assert value <= ref + 1e-7 * (1 + abs(ref))  # at least as good as cvxpy
    assert value >= ref - res.fw_gap - 1e-7 * (1 + abs(ref))  # and the gap certifies it
    g = H @ a - c  # KKT: equal gradients on the support
    assert g.min() >= g[a > 1e-12].max() - 1e-7 * (1 + np.abs(g).max())


def test_native_backend_is_the_default_and_agrees_with_clarabel(rng):
    ws = WorkingSet(30)
    for _ in range(60):  # more cuts than dimensions
        ws.add(Cut(rng.standard_normal(30), float(rng.standard_normal())))
    lam = 0.01
    native = QPReducedSolver(L2()).solve(ws, lam)
    ref = QPReducedSolver(L2(), "CLARABEL").solve(ws, lam)
    assert bk.resolve_backends(None, "simplex_qp")[0] == "ACTIVESET"
    assert native.backend == "ACTIVESET" and ref.backend == "CLARABEL"
    assert native.lower_bound >= ref.lower_bound - 1e-8 * abs(ref.lower_bound)
    assert native.lower_bound == pytest.approx(ref.lower_bound, rel=1e-6)


@pytest.fixture
def registry():
    saved_backends, saved_order = dict(bk.BACKENDS), list(bk._ORDER)
    yield
    bk.BACKENDS.clear()
    bk.BACKENDS.update(saved_backends)
    bk._ORDER[:] = saved_order
    bk.backend_available.cache_clear()


def test_unconverged_native_answer_falls_back_to_cvxpy(registry, rng):
    def lazy(H, c, alpha0=None, **kw):
        res = solve_simplex_qp(H, c, alpha0, **kw)
        if len(c) == 2:  # pass the availability probe
            return res
        a = np.full(len(c), 1.0 / len(c))
        g = H @ a - c
        return res._replace(alpha=a, fw_gap=float(a @ g - g.min()), converged=False)

    bk.register_backend(bk.Backend("LAZY", frozenset({"simplex_qp"}), native=lazy), position=0)
    ws = WorkingSet(4)
    for _ in range(6):
        ws.add(Cut(rng.standard_normal(4), float(rng.standard_normal())))
    sol = QPReducedSolver(L2(), ["LAZY", "CLARABEL"]).solve(ws, 0.5)
    assert sol.backend == "CLARABEL" and sol.failures[0][0] == "LAZY"
    assert "not converged" in sol.failures[0][1]
    only = QPReducedSolver(L2(), ["LAZY"]).solve(ws, 0.5)  # last resort: a weaker, still valid bound
    assert only.status == "optimal_inaccurate" and only.lower_bound <= sol.lower_bound + 1e-12


def test_default_backends_probe_cvxpy_only_when_a_solve_falls_back(registry, rng):
    """The default list: the native solver first; an unusable cvxpy backend (no licence) is skipped when reached."""
    probed = []

    def lazy(H, c, alpha0=None, **kw):
        res = solve_simplex_qp(H, c, alpha0, **kw)
        return res if len(c) == 2 else res._replace(converged=False)  # passes the probe, then fails

    def unlicensed(problem, **kw):
        probed.append(1)
        raise RuntimeError("licence cannot be located")

    bk.register_backend(bk.Backend("LAZY", frozenset({"simplex_qp"}), native=lazy), position=0)
    bk.register_backend(bk.Backend("NOLICENCE", bk._ALL, solve=unlicensed), position=1)
    solver = QPReducedSolver(L2())
    assert solver.backends[:2] == ["LAZY", "NOLICENCE"] and not probed  # listed, not probed
    ws = WorkingSet(4)
    for _ in range(6):
        ws.add(Cut(rng.standard_normal(4), float(rng.standard_normal())))
    sol = solver.solve(ws, 0.5)
    assert probed == [1]  # probed once, when the native answer was not accepted
    assert sol.backend not in ("LAZY", "NOLICENCE") and sol.status == "optimal"
    ref = QPReducedSolver(L2(), "CLARABEL").solve(ws, 0.5)
    assert sol.lower_bound == pytest.approx(ref.lower_bound, abs=1e-9)


def test_a_linear_svm_fit_answered_natively_never_imports_cvxpy():
    """A fresh process: LS-BMRM on a small hinge risk, every reduced problem solved by ACTIVESET."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, cutplane\n"
        "from cutplane.regularizers import L2\n"
        "from oracles.linear import BinaryHinge\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.standard_normal((200, 10)); y = np.where(X[:, 0] + 0.3 * rng.standard_normal(200) > 0, 1, -1)\n"
        "res = cutplane.minimize(BinaryHinge(X, y), L2(), 1e-2, method='ls-bmrm', eps=1e-6)\n"
        "assert res.status == 'converged' and res.history.n_cuts.max() > 2, res\n"
        "print('cvxpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "False"
