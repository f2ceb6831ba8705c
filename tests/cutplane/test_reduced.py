"""Reduced solvers against a direct cvxpy solve of the primal reduced problem; backend fallback."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import Cut
from cutplane.exceptions import InputError, SolverError
from cutplane.reduced import backends as bk
from cutplane.reduced.base import to_simplex
from cutplane.reduced.lp import LPReducedSolver
from cutplane.reduced.qp import QPReducedSolver
from cutplane.regularizers import L1, L2, Box, Simplex
from cutplane.working_set import WorkingSet


def random_working_set(rng, n, dim, sparse=False):
    ws = WorkingSet(dim)
    A = rng.standard_normal((n, dim)) * (rng.random((n, dim)) < 0.6)
    b = rng.standard_normal(n)
    for a, off in zip(A, b):
        ws.add(Cut(sp.csr_matrix(a[None, :]) if sparse else a, off))
    return ws, A, b


def primal_reduced(A, b, lam, term, constraints=lambda w: []):
    """min_w lam * Omega(w) + max_r <a_r, w> + b_r, solved directly (chapter eq. 11)."""
    w = cp.Variable(A.shape[1])
    obj = cp.max(A @ w + b) + (0 if term is None else lam * term(w))
    prob = cp.Problem(cp.Minimize(obj), constraints(w))
    prob.solve(solver="CLARABEL")
    return prob.value


@settings(max_examples=25)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 20),
    dim=st.integers(1, 8),
    lam=st.sampled_from([1e-2, 0.3, 1.0, 10.0]),
    formulation=st.sampled_from(["dpp", "direct"]),
    sparse=st.booleans(),
)
def test_qp_matches_primal(seed, n, dim, lam, formulation, sparse):
    rng = np.random.default_rng(seed)
    ws, A, b = random_working_set(rng, n, dim, sparse)
    sol = QPReducedSolver(L2(), formulation=formulation).solve(ws, lam)
    ref = primal_reduced(A, b, lam, lambda w: 0.5 * cp.sum_squares(w))
    assert sol.lower_bound == pytest.approx(ref, abs=1e-6 * max(1, abs(ref)))
    assert sol.lower_bound <= ref + 1e-7 * max(1, abs(ref))  # a lower bound, by weak duality
    # the primal point attains the value: F_t(w) = lam/2 ||w||^2 + max(Aw + b)
    F_t = lam * 0.5 * sol.w @ sol.w + np.max(A @ sol.w + b)
    assert F_t == pytest.approx(ref, abs=1e-5 * max(1, abs(ref)))
    assert sol.alpha.shape == (n,) and np.all(sol.alpha >= 0) and sol.alpha.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(sol.w, -A.T @ sol.alpha / lam, atol=1e-12)


@settings(max_examples=20)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 15), dim=st.integers(1, 6))
def test_lp_l1_matches_primal(seed, n, dim):
    rng = np.random.default_rng(seed)
    ws, A, b = random_working_set(rng, n, dim)
    lam = 1.0
    ws.add(Cut(np.zeros(dim), -5.0))  # keeps the model bounded below (R >= -5)
    A, b = np.vstack([A, np.zeros(dim)]), np.append(b, -5.0)
    sol = LPReducedSolver(L1()).solve(ws, lam)
    ref = primal_reduced(A, b, lam, cp.norm1)
    assert sol.lower_bound == pytest.approx(ref, abs=1e-6 * max(1, abs(ref)))
    assert lam * np.abs(sol.w).sum() + np.max(A @ sol.w + b) == pytest.approx(ref, abs=1e-6 * max(1, abs(ref)))


@settings(max_examples=20)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 15), dim=st.integers(1, 6), box=st.booleans())
def test_lp_indicator_matches_primal(seed, n, dim, box):
    rng = np.random.default_rng(seed)
    ws, A, b = random_working_set(rng, n, dim)
    if box:
        lo, up = -rng.random(dim), rng.random(dim)
        reg, cons = Box(lo, up), (lambda w: [w >= lo, w <= up])
    else:
        reg, cons = Simplex(dim), (lambda w: [w >= 0, cp.sum(w) == 1])
    sol = LPReducedSolver(reg).solve(ws, 1.0)
    ref = primal_reduced(A, b, 1.0, None, cons)
    assert sol.lower_bound == pytest.approx(ref, abs=1e-6 * max(1, abs(ref)))
    assert reg.contains(sol.w)
    assert np.max(A @ sol.w + b) == pytest.approx(ref, abs=1e-6 * max(1, abs(ref)))


def test_unbounded_l1_model_gives_a_clear_error():
    ws = WorkingSet(2)
    ws.add(Cut(np.array([3.0, 0.0]), 0.0))  # ||a||_inf > lam: lam ||w||_1 + 3 w_1 is unbounded below
    with pytest.raises(SolverError, match="unbounded"):
        LPReducedSolver(L1(), "CLARABEL").solve(ws, 1.0)


def test_to_simplex():
    np.testing.assert_allclose(to_simplex([0.5, -1e-9, 0.5]), [0.5, 0.0, 0.5])
    np.testing.assert_allclose(to_simplex([0.0, 0.0]), [0.5, 0.5])


# ------------------------------------------------------------------- backends
@pytest.fixture
def fake_backends():
    """Register fake backends for one test and restore the registry afterwards."""
    saved_backends, saved_order = dict(bk.BACKENDS), list(bk._ORDER)
    yield
    bk.BACKENDS.clear()
    bk.BACKENDS.update(saved_backends)
    bk._ORDER[:] = saved_order
    bk.backend_available.cache_clear()


class LicenceError(Exception):
    """Stands for mosek.Error: not a cvxpy error class."""


def _broken(problem, **kw):
    raise LicenceError("licence cannot be located")


def _probe_then(fail):
    """A solve that passes the availability probe (first call) and then ``fail``s."""
    calls = []

    def solve(problem, **kw):
        calls.append(1)
        if len(calls) == 1:
            return problem.solve(solver="CLARABEL")
        return fail(problem)

    return solve


def _inaccurate(problem, **kw):
    problem.solve(solver="CLARABEL")
    problem._status = "optimal_inaccurate"


def test_failing_backend_falls_back_and_is_recorded(fake_backends, rng):
    bk.register_backend(bk.Backend("BROKEN", bk._ALL, solve=_probe_then(_broken)), position=0)
    assert bk.resolve_backends(None, "qp")[0] == "BROKEN"
    ws, A, b = random_working_set(rng, 6, 4)
    sol = QPReducedSolver(L2(), ["BROKEN", "CLARABEL"]).solve(ws, 0.5)
    assert sol.backend == "CLARABEL"
    assert sol.failures[0][0] == "BROKEN" and "LicenceError" in sol.failures[0][1]
    ref = QPReducedSolver(L2(), "CLARABEL").solve(ws, 0.5)
    assert sol.lower_bound == pytest.approx(ref.lower_bound, abs=1e-9)


def test_inaccurate_answer_falls_back_then_is_last_resort(fake_backends, rng):
    bk.register_backend(bk.Backend("SLOPPY", bk._ALL, solve=_probe_then(_inaccurate)), position=0)
    bk.register_backend(bk.Backend("BROKEN", bk._ALL, solve=_probe_then(_broken)))
    ws, A, b = random_working_set(rng, 6, 4)
    sol = QPReducedSolver(L2(), ["SLOPPY", "CLARABEL"]).solve(ws, 0.5)
    assert sol.backend == "CLARABEL" and sol.failures == (("SLOPPY", "status optimal_inaccurate"),)
    sol = QPReducedSolver(L2(), ["SLOPPY", "BROKEN"]).solve(ws, 0.5)
    assert sol.backend == "SLOPPY" and sol.status == "optimal_inaccurate"
    assert "last resort" in sol.failures[-1][1]
    with pytest.raises(SolverError, match="BROKEN: LicenceError"):
        QPReducedSolver(L2(), ["BROKEN"]).solve(ws, 0.5)


def test_engine_records_fallbacks(fake_backends, rng):
    from cutplane import minimize
    from cutplane.cuts import OracleResult

    bk.register_backend(bk.Backend("BROKEN", bk._ALL, solve=_probe_then(_broken)), position=0)
    A, b = rng.standard_normal((8, 3)), rng.standard_normal(8)

    class MaxAffine:
        dim = 3

        def __call__(self, w):
            i = int(np.argmax(A @ w + b))
            return OracleResult(float(A[i] @ w + b[i]), Cut(A[i], b[i]))

    res = minimize(MaxAffine(), L2(), 1.0, eps=1e-6)
    assert res.status == "converged" and res.backend == "CLARABEL"
    multi_cut_iterations = int((res.history.n_cuts > 2).sum())  # one or two cuts: closed form
    assert len(res.fallbacks) == multi_cut_iterations > 0
    assert all(f.backend == "BROKEN" for f in res.fallbacks)
    assert [f.iteration for f in res.fallbacks] == sorted({f.iteration for f in res.fallbacks})


def test_unlicensed_backend_is_quietly_unavailable(fake_backends):
    """An installed backend that raises a non-cvxpy error (mosek.Error) is detected by a probe."""
    bk.register_backend(bk.Backend("NOLICENCE", bk._ALL, solve=_broken), position=0)
    assert not bk.backend_available("NOLICENCE")
    assert "NOLICENCE" not in bk.available_backends("qp")
    assert bk.resolve_backends(["NOLICENCE", "CLARABEL"], "qp") == ["CLARABEL"]
    with pytest.raises(InputError, match="no usable backend"):
        bk.resolve_backends("NOLICENCE", "qp")
    # the real MOSEK: installed here without a licence (mosek.Error); the probe must not raise
    bk.register_backend(bk.Backend("MOSEK", bk._ALL), position=0)
    ok = bk.backend_available("MOSEK")  # must not raise, licensed or not
    if "MOSEK" not in cp.installed_solvers():
        assert not ok
    else:
        x = cp.Variable()
        try:
            cp.Problem(cp.Minimize(x), [x >= 1]).solve(solver="MOSEK")
            licensed = True
        except Exception:
            licensed = False
        assert ok == licensed
        assert ("MOSEK" in bk.available_backends("qp")) == licensed
        if not licensed:
            assert bk.resolve_backends(["MOSEK", "CLARABEL"], "qp") == ["CLARABEL"]
            with pytest.raises(InputError, match="no usable backend"):
                bk.resolve_backends("MOSEK", "qp")


def test_backend_names_are_checked():
    with pytest.raises(InputError, match="unknown solver"):
        bk.resolve_backends("NOT_A_SOLVER", "qp")
    with pytest.raises(InputError, match="empty"):
        bk.resolve_backends([], "qp")
    assert "HIGHS" not in bk.resolve_backends(None, "qp")
    assert bk.resolve_backends("clarabel", "lp") == ["CLARABEL"]


def test_highs_banner_stays_off_standard_output(capfd):
    """HiGHS prints a banner on file descriptor 1 when a process makes its first ``Highs`` object,
    whatever the options; probing and solving with the HIGHS backend keeps it off stdout and
    logs it at DEBUG level. A fresh interpreter is needed (the banner comes once per process);
    it shares this test's captured descriptors."""
    import subprocess
    import sys
    import textwrap

    pytest.importorskip("highspy")
    script = textwrap.dedent(
        """
        import logging, sys
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
        from cutplane.cuts import Cut
        from cutplane.reduced import backends as bk
        from cutplane.reduced.lp import LPReducedSolver
        from cutplane.regularizers import Simplex
        from cutplane.working_set import WorkingSet
        import numpy as np
        assert bk.backend_available("HIGHS")
        ws = WorkingSet(2)
        ws.add(Cut(np.array([1.0, -1.0]), 0.5))
        ws.add(Cut(np.array([-1.0, 2.0]), 0.0))
        assert LPReducedSolver(Simplex(2), backends="HIGHS").solve(ws, 1.0).backend == "HIGHS"
        """
    )
    done = subprocess.run([sys.executable, "-c", script], timeout=300)
    assert done.returncode == 0
    captured = capfd.readouterr()
    assert captured.out == ""
    assert "Running HiGHS" in captured.err  # the banner was made, and logged instead of printed
