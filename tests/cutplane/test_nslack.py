"""The n-slack method (:mod:`cutplane.nslack`): its dual against direct cvxpy solves, its certificates.

- :class:`ExampleWorkingSets`: ``lower_bound()`` is ``D(alpha)`` recomputed from the stored rows
  (checked against the dense formula); the sweeps never lower it; run to convergence they reach
  the optimum of the per-example reduced problem, solved directly by cvxpy; merged cuts and
  compactions keep ``D(alpha) <= min F``.
- ``minimize(..., method="n-slack")``: lower <= upper, the lower bound monotone, gap <= eps at
  exit, and the same optimum as a direct cvxpy solve of the SVM within eps (hypothesis over data
  and lam); the options and refusals.
"""

from __future__ import annotations

import logging
import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import cutplane
from cutplane.engine import minimize_with_working_set
from cutplane.exceptions import ConvergenceWarning, InputError
from cutplane.nslack import ExampleWorkingSets, _kernels  # _kernels: the placement under test
from cutplane.regularizers import L1, L2
from oracles.linear import BinaryHinge, MulticlassHinge


def _random_batch(rng, n, dim, density=0.5):
    slopes = sp.random(n, dim, density=density, random_state=np.random.RandomState(rng.integers(2**31)), format="csr")
    slopes.data = np.round(4 * slopes.data - 2, 1)
    slopes.eliminate_zeros()
    return slopes, rng.uniform(0.0, 2.0, n)


def _dual_value(sets, cuts):
    """D(alpha) from the slots' cuts written out densely (``cuts[r] = (dense slope, offset)``)."""
    n, m = sets.slot.shape
    v = np.zeros(sets.dim)
    lin = 0.0
    for i in range(n):
        lin += sets.alpha[i, 0] * sets.floor
        for j in range(m):
            r = sets.slot[i, j]
            if r >= 0:
                a = np.zeros(sets.dim)
                np.add.at(a, *sets.row(r))
                v += sets.alpha[i, j + 1] * a
                lin += sets.alpha[i, j + 1] * sets.rb[r]
    w = -v / (sets.lam * n)
    return lin / n - 0.5 * sets.lam * w @ w, w


def _model_optimum(all_cuts, n, dim, lam, floor):
    """min_w lam/2 ||w||^2 + (1/n) sum_i max(floor, max_j <a_ij, w> + b_ij), by cvxpy."""
    w = cp.Variable(dim)
    terms = []
    for i in range(n):
        pieces = [cp.Constant(floor)] + [a @ w + b for a, b in all_cuts[i]]
        terms.append(cp.max(cp.hstack(pieces)))
    prob = cp.Problem(cp.Minimize(0.5 * lam * cp.sum_squares(w) + sum(terms) / n))
    prob.solve(solver=cp.CLARABEL)
    return prob.value


def _fill(sets, rng, n_batches):
    """Add ``n_batches`` random batches of cuts at the sets' current w, sweeping between them;
    return every cut ever added, per example (dense)."""
    n, dim = sets.n, sets.dim
    added = [[] for _ in range(n)]
    for _ in range(n_batches):
        slopes, offsets = _random_batch(rng, n, dim)
        values = slopes @ sets.w + offsets  # the cut is tight at w
        before = sets.slot.copy()
        sets.add(values, offsets, slopes)
        for i in range(n):
            if not np.array_equal(before[i], sets.slot[i]):
                added[i].append((slopes[i].toarray().ravel(), offsets[i]))
        d0 = sets.lower_bound()
        for _ in range(3):
            sets.sweep(rng.permutation(n))
        assert sets.lower_bound() >= d0 - 1e-12  # block-coordinate ascent never lowers D
    return added


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), dim=st.integers(1, 5), lam=st.sampled_from([1.0, 0.1, 0.01])
)
def test_sweeps_reach_the_optimum_of_the_reduced_problem(seed, n, dim, lam):
    rng = np.random.default_rng(seed)
    sets = ExampleWorkingSets(n, dim, lam, 0.0, planes=8)
    added = _fill(sets, rng, 3)
    for _ in range(50_000):  # coordinate ascent is slow on ill-conditioned blocks (lam = 0.01): thousands of passes
        _, gap = sets.sweep(rng.permutation(n), tol=1e-14)
        if gap < 1e-12:
            break
    d = sets.lower_bound()
    d_ref, w_ref = _dual_value(sets, added)
    assert d == pytest.approx(d_ref, abs=1e-10)  # the stored rows give D(alpha)
    np.testing.assert_allclose(sets.w, w_ref, atol=1e-10)
    np.testing.assert_allclose(sets.alpha.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(sets.alpha >= 0)
    opt = _model_optimum(added, n, dim, lam, 0.0)
    assert d <= opt + 1e-6  # weak duality
    assert d == pytest.approx(opt, abs=1e-5 * (1 + abs(opt)))  # strong duality at convergence


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 8), dim=st.integers(1, 5))
def test_threaded_sweeps_keep_the_duals_feasible_and_reach_the_optimum(seed, n, dim):
    rng = np.random.default_rng(seed)
    sets = ExampleWorkingSets(n, dim, 0.1, 0.0, planes=8)
    added = _fill(sets, rng, 3)
    for k in range(20_000):
        _, gap = sets.sweep(rng.permutation(n), tol=1e-14, threads=2)
        if k % 10 == 9:
            sets.lower_bound()  # w afresh from the duals, as the loop does each iteration
            if gap < 1e-12:
                break
    d = sets.lower_bound()
    assert np.all(sets.alpha >= 0)
    np.testing.assert_allclose(sets.alpha.sum(axis=1), 1.0, atol=1e-12)
    assert d == pytest.approx(_dual_value(sets, added)[0], abs=1e-10)
    opt = _model_optimum(added, n, dim, 0.1, 0.0)
    assert d <= opt + 1e-6
    assert d == pytest.approx(opt, abs=1e-5 * (1 + abs(opt)))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 5), dim=st.integers(1, 4), threads=st.sampled_from([1, 2]))
def test_merged_cuts_and_compaction_keep_the_bound_valid(seed, n, dim, threads):
    rng = np.random.default_rng(seed)
    sets = ExampleWorkingSets(n, dim, 0.1, 0.0, planes=2, threads=threads)  # full after two cuts: merges follow
    added = _fill(sets, rng, 12)
    d = sets.lower_bound()
    d_ref, _ = _dual_value(sets, added)
    assert d == pytest.approx(d_ref, abs=1e-10)
    assert d <= _model_optimum(added, n, dim, 0.1, 0.0) + 1e-6  # merged cuts are convex combinations
    assert sets.n_cuts <= 2 * n
    assert sets.live_nnz <= int(sets.state[1])


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), threads=st.sampled_from([1, 2]))
def test_a_pool_that_fills_up_during_placement_gives_the_same_sets(seed, threads):
    """The placement stops where the pool is full, the merges placed so far are written, the
    pool grows or is compacted, and the placement goes on: the same duals and bound, bit for
    bit, as with room to spare."""
    early = []
    place = _kernels.place

    def counting_place(lo, want, *args):
        stop = place(lo, want, *args)
        early.append(stop < want.shape[0])
        return stop

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_kernels, "place", counting_place)
        tight, roomy = _fill_tight_and_roomy(seed, threads)
    assert any(early)  # the path under test was taken
    assert tight.n_merged == roomy.n_merged > 0
    np.testing.assert_array_equal(tight.alpha, roomy.alpha)
    assert tight.lower_bound() == roomy.lower_bound()
    np.testing.assert_array_equal(tight.w, roomy.w)
    assert tight.lower_bound() == pytest.approx(_dual_value(tight, [[] for _ in range(tight.n)])[0], abs=1e-10)


def _fill_tight_and_roomy(seed, threads):
    n, dim = 12, 40
    tight = ExampleWorkingSets(n, dim, 0.1, 0.0, planes=2, threads=threads)
    tight.pidx, tight.pval = tight.pidx[:8].copy(), tight.pval[:8].copy()  # a pool far too small
    roomy = ExampleWorkingSets(n, dim, 0.1, 0.0, planes=2, threads=threads)
    rng_t, rng_r = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(8):
        for sets, rng in ((tight, rng_t), (roomy, rng_r)):
            slopes, offsets = _random_batch(rng, n, dim)
            sets.add(slopes @ sets.w + offsets, offsets, slopes)
            sets.lower_bound()
            sets.sweep(rng.permutation(n), threads=1)
    return tight, roomy


@pytest.mark.parametrize("threads", [1, 2])
def test_the_pool_is_compacted_when_dropped_rows_dominate(threads):
    rng = np.random.default_rng(0)
    sets = ExampleWorkingSets(4, 300, 0.1, 0.0, planes=2, threads=threads)
    sizes, pools = [], []
    for _ in range(150):
        slopes, offsets = _random_batch(rng, 4, 300)
        sets.add(slopes @ sets.w + offsets + 1.0, offsets + 1.0, slopes)
        sets.sweep(rng.permutation(4))
        sets.lower_bound()
        sizes.append(int(sets.state[1]))
        pools.append(sets.pidx)  # kept alive: distinct objects have distinct ids
    assert sets.n_merged > 0
    assert int(np.sum(np.diff(sizes) < 0)) >= 3  # three compactions or more
    assert len({id(p) for p in pools}) == 1  # ... in place: one pool, never a second one beside it
    assert sets.pidx.shape[0] <= 1 << 16  # ~1800 live entries: the pool never outgrows its first size
    d_ref, _ = _dual_value(sets, [[] for _ in range(4)])  # the rows the slots hold, after compactions
    assert sets.lower_bound() == pytest.approx(d_ref, abs=1e-10)


def test_a_cut_that_is_not_violated_is_not_added():
    sets = ExampleWorkingSets(2, 3, 1.0, 0.0, planes=3)
    slopes = sp.csr_matrix(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    assert sets.add(np.array([1.0, 0.0]), np.array([1.0, 0.0]), slopes) == 1  # the zero row is the floor itself
    assert sets.add(np.array([1.0, 0.0]), np.array([1.0, 0.0]), slopes) == 0  # the same cut again
    assert sets.n_cuts == 1


def _svm_optimum(X, y, lam):
    w = cp.Variable(X.shape[1])
    prob = cp.Problem(cp.Minimize(0.5 * lam * cp.sum_squares(w) + cp.sum(cp.pos(1 - cp.multiply(y, X @ w))) / len(y)))
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40), d=st.integers(1, 6), lam=st.sampled_from([1.0, 1e-2, 1e-3])
)
def test_minimize_certifies_the_svm_optimum(seed, n, d, lam):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    eps = 1e-6
    res = cutplane.minimize(BinaryHinge(X, y), L2(), lam, method="n-slack", eps=eps, max_iter=5000)
    h = res.history
    assert res.status == "converged"
    assert res.gap <= eps
    assert np.all(h.lower <= h.best_upper + 1e-12)
    assert np.all(np.diff(h.lower) >= -1e-12 * (1 + np.abs(h.lower[1:])))  # round-off of the clipping only
    assert np.all(np.diff(h.best_upper) <= 0)
    opt = _svm_optimum(X, y, lam)
    assert res.lower_bound <= opt + 1e-7
    assert res.objective == pytest.approx(opt, abs=eps + 1e-6)
    F = 0.5 * lam * res.w @ res.w + np.maximum(0, 1 - y * (X @ res.w)).mean()
    assert res.objective == pytest.approx(F, abs=1e-12)
    assert res.method == "n-slack" and res.n_oracle_calls == res.n_iter == len(h)
    assert np.all(np.isfinite(h.wall_time)) and np.all(np.diff(h.wall_time) >= 0)


def test_same_optimum_as_bmrm_on_the_multiclass_hinge():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((80, 5))
    y = np.argmax(X @ rng.standard_normal((5, 3)) + 0.5 * rng.standard_normal((80, 3)), axis=1)
    _same_optimum_as_bmrm(MulticlassHinge(X, y), 1e-2, 1e-7)


def _same_optimum_as_bmrm(oracle, lam, eps):
    """BMRM and n-slack both certified to ``eps``: the same optimum, each bound below the other's objective."""
    a = cutplane.minimize(oracle, L2(), lam, eps=eps, max_iter=5000)
    b = cutplane.minimize(oracle, L2(), lam, method="n-slack", eps=eps, max_iter=5000)
    assert a.status == b.status == "converged"
    assert b.objective == pytest.approx(a.objective, abs=2 * eps)
    assert b.lower_bound <= a.objective + 1e-12 and a.lower_bound <= b.objective + 1e-12


def test_options_change_the_run_and_the_seed_makes_it_reproducible():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((60, 4))
    oracle = BinaryHinge(X, np.where(X[:, 0] + 0.3 * rng.standard_normal(60) > 0, 1.0, -1.0))
    kw = dict(method="n-slack", eps=1e-4, max_iter=2000)
    a = cutplane.minimize(
        oracle, L2(), 1e-3, options=dict(seed=7, planes=3, max_sweeps=2, sweep_time_ratio=None, sweep_threads=1), **kw
    )
    b = cutplane.minimize(
        oracle, L2(), 1e-3, options=dict(seed=7, planes=3, max_sweeps=2, sweep_time_ratio=None, sweep_threads=1), **kw
    )
    np.testing.assert_array_equal(a.history.lower, b.history.lower)
    assert a.status == "converged"


@pytest.mark.parametrize("average_every, bound_every", [(0, 1), (2, 1), (3, 1), (3, 2), (0, 3)])
def test_averaged_queries_reach_the_same_certified_optimum(average_every, bound_every, caplog):
    """The queries at the running average give valid cuts and upper bounds, and a bound taken
    every few iterations is still certified: the run ends at the direct solve's optimum with
    lower <= optimum <= upper."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((80, 6))
    y = np.where(X[:, 1] - 0.5 * X[:, 2] + 0.4 * rng.standard_normal(80) > 0, 1.0, -1.0)
    oracle = BinaryHinge(X, y)
    lam, eps = 1e-3, 1e-6
    seen = []
    caplog.set_level(logging.DEBUG, logger="cutplane")
    res = cutplane.minimize(
        oracle,
        L2(),
        lam,
        method="n-slack",
        eps=eps,
        max_iter=5000,
        options=dict(average_every=average_every, bound_every=bound_every, average_below=1.0),
        callback=lambda info: seen.append(info.w.copy()) and False,
    )
    opt = _svm_optimum(X, y, lam)
    assert res.status == "converged"
    assert res.lower_bound <= opt + 1e-7 <= res.objective + 2e-7
    assert res.objective - res.lower_bound <= eps
    assert res.objective == pytest.approx(0.5 * lam * res.w @ res.w + oracle(res.w).value, abs=1e-12)
    uppers = [0.5 * lam * w @ w + oracle(w).value for w in seen]
    averaged = sum("(averaged query)" in r.getMessage() for r in caplog.records)
    assert (averaged > 0) == (average_every > 0)
    assert len(uppers) == res.n_iter - 1  # the callback does not see the converged iteration
    np.testing.assert_allclose(res.history.upper[:-1], uppers, rtol=1e-12, atol=1e-12)  # F at each query


def test_limits_stop_with_a_warning_and_a_valid_certificate():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((200, 10))
    oracle = BinaryHinge(X, np.where(rng.random(200) < 0.5, -1.0, 1.0))
    with pytest.warns(ConvergenceWarning, match="n-slack stopped \\(max_iter\\)"):
        res = cutplane.minimize(oracle, L2(), 1e-4, method="n-slack", eps=1e-12, max_iter=2)
    assert res.status == "max_iter" and res.n_iter == 2
    assert res.lower_bound <= _svm_optimum(X, oracle.y, 1e-4) + 1e-7
    seen = []
    res = cutplane.minimize(
        oracle, L2(), 1e-4, method="n-slack", eps=1e-12, callback=lambda info: seen.append(info) or True
    )
    assert res.status == "callback" and len(seen) == 1 and seen[0].iteration == 1


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(regularizer=L1()), "regularizer"),
        (dict(max_cuts=10), "max_cuts"),
        (dict(memory_limit=10**6), "memory_limit"),
        (dict(w0=np.zeros(3)), "w0"),
        (dict(cache_steps=2), "cache_steps"),
        (dict(options=dict(planes=1)), "planes"),
        (dict(options=dict(sweeps=3)), "options"),
        (dict(options=dict(sweep_time_ratio=0)), "sweep_time_ratio"),
        (dict(options=dict(average_every=1)), "average_every"),
        (dict(options=dict(average_every=-2)), "average_every"),
        (dict(options=dict(average_decay=1.0)), "average_decay"),
        (dict(options=dict(average_decay=True)), "average_decay"),
        (dict(options=dict(bound_every=0)), "bound_every"),
        (dict(options=dict(average_below=0)), "average_below"),
    ],
)
def test_what_does_not_apply_is_refused(kwargs, field):
    oracle = BinaryHinge(np.eye(3), np.array([1.0, -1.0, 1.0]))
    reg = kwargs.pop("regularizer", L2())
    with pytest.raises(InputError) as err:
        cutplane.minimize(oracle, reg, 0.1, method="n-slack", **kwargs)
    assert err.value.field == field


def test_an_oracle_without_example_cuts_and_other_methods_with_options_are_refused():
    from cutplane.cuts import Cut, OracleResult

    class OneCut:
        dim = 2

        def __call__(self, w):
            return OracleResult(float(abs(w).sum()), Cut(np.sign(w), 0.0))

    with pytest.raises(InputError, match="ExampleCutsOracle"):
        cutplane.minimize(OneCut(), L2(), 0.1, method="n-slack")
    oracle = BinaryHinge(np.eye(2), np.array([1.0, -1.0]))
    with pytest.raises(InputError, match="n-slack"):
        cutplane.minimize(oracle, L2(), 0.1, options=dict(planes=3))
    with pytest.raises(InputError, match="warm start"):
        minimize_with_working_set(oracle, L2(), 0.1, method="n-slack")


def test_a_cut_above_the_risk_is_refused():
    from cutplane.cuts import ExampleCuts

    class Wrong(BinaryHinge):
        def example_cuts(self, w):
            ex = super().example_cuts(w)
            return ExampleCuts(ex.values, ex.offsets + 1.0, ex.slopes)

    with pytest.raises(InputError, match="above its risk"):
        cutplane.minimize(Wrong(np.eye(2), np.array([1.0, -1.0])), L2(), 0.1, method="n-slack")


def test_no_warning_when_converged():
    oracle = BinaryHinge(np.eye(3), np.array([1.0, -1.0, 1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = cutplane.minimize(oracle, L2(), 0.1, method="n-slack", eps=1e-9)
    assert res.converged


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), dim=st.integers(1, 5), shrink=st.floats(0.05, 1.0))
def test_the_scale_step_is_the_exact_line_search_and_its_value_is_the_recomputed_one(seed, n, dim, shrink):
    rng = np.random.default_rng(seed)
    sets = ExampleWorkingSets(n, dim, 0.01, 0.0, planes=4)
    _fill(sets, rng, 2)
    sets.alpha[:, 1:] *= shrink  # far from the optimum of the scale: w too small
    d0 = sets.lower_bound()
    grid = []
    for s in np.linspace(0.0, 1.0 / max(sets.alpha[:, 1:].sum(axis=1).max(), 1e-300), 41):
        trial = ExampleWorkingSets(n, dim, 0.01, 0.0, planes=4)
        for name in ("slot", "rstart", "rlen", "rb", "rfo", "pidx", "pval", "fval", "state"):
            setattr(trial, name, getattr(sets, name).copy())
        trial.alpha = sets.alpha.copy()
        trial.alpha[:, 1:] *= s
        trial.alpha[:, 0] = 1.0 - trial.alpha[:, 1:].sum(axis=1)
        grid.append(trial.lower_bound())
    d = sets.scale_step(d0)
    assert d >= d0 - 1e-12
    assert d >= max(grid) - 1e-9  # the maximum along the line, not only better than s = 1
    assert d == pytest.approx(sets.lower_bound(), abs=1e-12 * (1 + abs(d)))  # what the duals give
    assert np.all(sets.alpha >= 0) and np.allclose(sets.alpha.sum(axis=1), 1.0)


def test_a_threaded_sequence_oracle_runs_two_thread_passes_to_the_bmrm_optimum():
    from cutplane.executors import ThreadExecutor
    from oracles.sequence import SequenceHingeOracle

    from ..oracles.test_sequence_oracle import random_data

    rng = np.random.default_rng(11)
    data = random_data(rng, 60, 7, 12, 4, max_feats=4)
    _same_optimum_as_bmrm(SequenceHingeOracle(*data, 12, 4, executor=ThreadExecutor(2), n_chunks=4), 0.05, 1e-6)


def test_a_path_of_lam_runs_every_point_cold_to_its_certificate():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((50, 4))
    oracle = BinaryHinge(X, np.where(X[:, 1] + 0.5 * rng.standard_normal(50) > 0, 1.0, -1.0))
    path = cutplane.regularization_path(oracle, L2(), [1.0, 0.1, 0.01], eps=1e-6, method="n-slack", max_iter=5000)
    assert path.status == "converged"
    for lam, res in zip(path.lams, path.results):
        assert res.method == "n-slack" and res.converged
        assert res.objective == pytest.approx(_svm_optimum(X, oracle.y, lam), abs=2e-6)
    with pytest.raises(InputError) as err:
        cutplane.regularization_path(oracle, L2(), [1.0, 0.1], eps=1e-6, method="n-slack", max_cuts=10)
    assert err.value.field == "max_cuts"


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), dim=st.integers(1, 40), threads=st.integers(2, 5))
def test_the_recomputed_w_is_the_same_bit_for_bit_with_any_number_of_threads(seed, n, dim, threads):
    rng = np.random.default_rng(seed)
    sets = ExampleWorkingSets(n, dim, 0.1, 0.0, planes=3)
    added = _fill(sets, rng, 4)
    d1, w1 = sets.lower_bound(), sets.w.copy()
    sets.threads = threads
    d2 = sets.lower_bound()
    np.testing.assert_array_equal(sets.w, w1)
    assert d1 == d2
    assert d1 == pytest.approx(_dual_value(sets, added)[0], abs=1e-10)


def test_cuts_of_the_wrong_shape_are_refused():
    sets = ExampleWorkingSets(3, 4, 0.1, 0.0)
    with pytest.raises(InputError, match=r"expected slopes of shape \(3, 4\)"):
        sets.add(np.zeros(3), np.zeros(3), sp.csr_matrix((3, 5)))
    with pytest.raises(InputError, match="got"):
        sets.add(np.zeros(2), np.zeros(3), sp.csr_matrix((3, 4)))
    with pytest.raises(InputError) as err:
        ExampleWorkingSets(3, 4, 0.1, 0.0, planes=1)
    assert err.value.field == "planes"


def test_the_coordinate_type_is_int32_while_every_coordinate_fits():
    from cutplane.cuts import coordinate_dtype

    assert coordinate_dtype(2**31 - 1) == np.int32  # the largest coordinate is 2**31 - 2
    assert coordinate_dtype(2**31) == np.int64
    assert ExampleWorkingSets(2, 10, 1.0, 0.0).pidx.dtype == np.int32
