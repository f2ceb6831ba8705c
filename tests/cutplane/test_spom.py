"""SPOM (cutplane.online): the lazily scaled vector against dense bookkeeping, Alg. 1 against a
dense transcription step for step, convergence against a direct cvxpy solve, seeds, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from cutplane.groups import group_norms
from cutplane.online import (
    ExampleSubgradient,
    GroupLasso,
    GroupPower,
    LazyGroupVector,
    OnlineProximal,
    SquaredGroupNorm,
    as_example_oracle,
    as_group_terms,
    lazy_groups,
    spom,
)
from cutplane.prox import project_l2_ball, prox_group_l2q, prox_group_l21, prox_squared_group_l1
from cutplane.regularizers import L2, MixedNorm


class Multiclass:
    """Crammer-Singer hinge ``L_i(w) = max_y [1{y != y_i} + <w_y - w_{y_i}, x_i>]`` with ``w`` laid
    out class-major (block ``k`` is ``w[k*p:(k+1)*p]``); a tiny structured oracle with an exact argmax."""

    def __init__(self, X, y, n_classes, *, with_support=True):
        self.X, self.y, self.K = np.asarray(X, float), np.asarray(y), int(n_classes)
        self.n_samples, self.p = self.X.shape
        self.dim = self.K * self.p
        self.with_support = with_support

    def example_support(self, i):
        if not self.with_support:
            return None
        nz = np.flatnonzero(self.X[i])
        return (np.arange(self.K)[:, None] * self.p + nz).ravel()

    def example_subgradient(self, i, w_support):
        x, yi = self.X[i], self.y[i]
        nz = np.flatnonzero(x)
        if self.with_support:
            Wk = np.asarray(w_support).reshape(self.K, nz.size)
        else:
            Wk = np.asarray(w_support).reshape(self.K, self.p)[:, nz]
        scores = Wk @ x[nz]
        aug = scores - scores[yi] + (np.arange(self.K) != yi)
        yhat = int(np.argmax(aug))
        if yhat == yi:
            return ExampleSubgradient(float(aug[yhat]), np.zeros(0, np.int64), np.zeros(0))
        idx = np.concatenate([yhat * self.p + nz, yi * self.p + nz])
        return ExampleSubgradient(float(aug[yhat]), idx.astype(np.int64), np.concatenate([x[nz], -x[nz]]))

    class _Value:
        def __init__(self, value):
            self.value = value

    def __call__(self, w):
        W = np.asarray(w).reshape(self.K, self.p)
        S = self.X @ W.T
        aug = S - S[np.arange(self.n_samples), self.y][:, None] + (np.arange(self.K)[None, :] != self.y[:, None])
        return self._Value(float(aug.max(axis=1).mean()))

    def cvx_risk(self, w):
        import cvxpy as cp

        W = cp.reshape(w, (self.K, self.p), order="C")
        S = self.X @ W.T
        rows = [cp.max(S[i, :] - S[i, self.y[i]] + (np.arange(self.K) != self.y[i])) for i in range(self.n_samples)]
        return sum(rows) / self.n_samples


def make_problem(seed, n=30, p=8, K=3, n_informative=3, density=0.6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * (rng.random((n, p)) < density)
    W = np.zeros((K, p))
    W[:, :n_informative] = rng.normal(size=(K, n_informative)) * 2
    y = np.argmax(X @ W.T + 0.3 * rng.normal(size=(n, K)), axis=1)
    feat_groups = np.arange(p) % 4  # 4 feature groups spread over the class blocks: unsorted coordinates
    groups = np.tile(feat_groups, K)
    return X, y, K, groups


# ------------------------------------------------------------------ the lazy vector
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 10**6)),
        st.tuples(st.just("scale_groups"), st.integers(0, 10**6)),
        st.tuples(st.just("scale"), st.floats(0.05, 1.0)),
        st.tuples(st.just("accumulate"), st.just(0)),
        st.tuples(st.just("compact"), st.just(0)),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=60)
@given(ops=ops, sorted_groups=st.booleans(), slices=st.booleans())
def test_lazy_vector_matches_dense_bookkeeping(ops, sorted_groups, slices):
    # slices: to_dense by one multiply per contiguous group (the path of large groups), else the kernel
    saved = lazy_groups._SLICE_MIN
    lazy_groups._SLICE_MIN = 1 if slices else 10**9
    try:
        _check_lazy_vector(ops, sorted_groups)
    finally:
        lazy_groups._SLICE_MIN = saved


def _check_lazy_vector(ops, sorted_groups):
    rng = np.random.default_rng(0)
    m, dim = 4, 23
    groups = np.sort(rng.integers(0, m, dim)) if sorted_groups else rng.integers(0, m, dim)
    groups[:m] = np.arange(m)  # every group non-empty
    lazy = LazyGroupVector(groups, m, track_average=True)
    w, total, rounds = np.zeros(dim), np.zeros(dim), 0
    for name, arg in ops:
        r = np.random.default_rng(int(arg))
        if name == "add":
            idx = r.choice(dim, size=r.integers(1, 6), replace=False)
            vals = r.normal(size=idx.size)
            lazy.add(idx, vals)
            w[idx] += vals
        elif name == "scale_groups":  # zeros (restarts) and tiny factors (renormalisation) included
            f = r.choice([0.0, 1e-9, 0.5, 1.0], size=m)
            lazy.scale_groups(f)
            w *= f[groups]
        elif name == "scale":
            lazy.scale(arg)
            w *= arg
        elif name == "accumulate":
            lazy.accumulate()
            total += w
            rounds += 1
        else:
            lazy.compact()
        scale = max(1.0, np.abs(w).max())
        np.testing.assert_allclose(lazy.to_dense(), w, rtol=0, atol=1e-12 * scale)
        buf = np.full(dim, np.nan)  # a reused buffer: every coordinate overwritten, stale ones with 0
        assert lazy.to_dense(out=buf) is buf
        np.testing.assert_allclose(buf, w, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(lazy.norms(), group_norms(w, groups, m), rtol=1e-9, atol=1e-12 * scale)
        np.testing.assert_allclose(lazy.gather(np.arange(dim)[::-1]), w[::-1], rtol=0, atol=1e-12 * scale)
        if rounds:
            avg = total / rounds
            np.testing.assert_allclose(lazy.average(), avg, rtol=0, atol=1e-9 * max(1.0, np.abs(avg).max()))


@pytest.mark.parametrize("slice_min", [1, 10**9])
def test_lazy_vector_restarted_group_reads_zero_where_untouched(slice_min):
    # a group zeroed by the prox and written again: its untouched coordinates hold old values in v
    saved = lazy_groups._SLICE_MIN
    lazy_groups._SLICE_MIN = slice_min
    try:
        groups = np.repeat([0, 1], 5)
        lazy = LazyGroupVector(groups, 2)
        lazy.add(np.arange(10), np.arange(1.0, 11.0))
        lazy.scale_groups(np.array([0.0, 2.0]))
        lazy.add(np.array([1]), np.array([7.0]))
        expected = np.array([0, 7, 0, 0, 0, 12, 14, 16, 18, 20], dtype=float)
        np.testing.assert_array_equal(lazy.to_dense(), expected)
        np.testing.assert_array_equal(lazy.to_dense(out=np.full(10, np.nan)), expected)
        np.testing.assert_allclose(lazy.norms(), [7.0, np.linalg.norm(expected[5:])])
    finally:
        lazy_groups._SLICE_MIN = saved


@pytest.mark.parametrize("out", [np.zeros(5), np.zeros(6, dtype=np.float32), np.zeros(12)[::2]])
def test_lazy_vector_to_dense_refuses_a_wrong_buffer(out):
    lazy = LazyGroupVector(np.array([0, 0, 1, 1, 1, 0]), 2)
    with pytest.raises(InputError, match="out must be"):
        lazy.to_dense(out=out)


# ------------------------------------------------------------- Alg. 1, step for step
def dense_alg1(oracle, order, eta, lam, prox_steps, gamma):
    """Seed 000 Alg. 1 transcribed with dense vectors: yields (w_{t+1}, mean of w_1..w_t)."""
    w, total = np.zeros(oracle.dim), np.zeros(oracle.dim)
    for t, i in enumerate(order, start=1):
        total += w
        e = eta(t)
        sup = oracle.example_support(i)
        sg = oracle.example_subgradient(i, w if sup is None else w[sup])
        w = w.copy()
        w[sg.indices] -= e * sg.values
        for prox in prox_steps:
            w = prox(w, e * lam)
        if gamma is not None:
            w = project_l2_ball(w, gamma)
        yield w, total / t


CASES = {
    "mkl": (MixedNorm, lambda g: [lambda v, tau: prox_squared_group_l1(v, tau, g)]),
    "sparse-group-lasso+l2": (
        lambda g, **k: [(GroupLasso(), 0.5), (SquaredGroupNorm(2.0), 1.0)],
        lambda g: [lambda v, tau: prox_group_l21(v, 0.5 * tau, g), lambda v, tau: v / (1 + tau)],
    ),
    "l2q": (lambda g, **k: GroupPower(1.5), lambda g: [lambda v, tau: prox_group_l2q(v, tau, g, 1.5)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("with_support", [True, False])
@pytest.mark.parametrize("gamma", [None, 2.0])
def test_lazy_spom_equals_dense_alg1_step_for_step(case, with_support, gamma):
    X, y, K, groups = make_problem(3, n=12)
    oracle = Multiclass(X, y, K, with_support=with_support)
    make_reg, make_prox = CASES[case]
    reg = make_reg(groups, p=1.0) if make_reg is MixedNorm else make_reg(groups)
    lam, eta0 = 0.7, 0.9  # large steps: groups are zeroed and restarted, scales shrink fast
    state = OnlineProximal(oracle, as_group_terms(reg), lam, groups, 4, eta0=eta0, gamma=gamma, averaged=True)
    order = np.random.default_rng(1).integers(0, X.shape[0], 150)
    ref = dense_alg1(oracle, order, lambda t: eta0 / np.sqrt(t), lam, make_prox(groups), gamma)
    n_zeroed = 0
    for t, (i, (w_ref, avg_ref)) in enumerate(zip(order, ref), start=1):
        state.step(int(i))
        np.testing.assert_allclose(state.w_last(), w_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(state.w_average(), avg_ref, rtol=1e-9, atol=1e-12)
        n_zeroed += int(np.sum(group_norms(w_ref, groups, 4) == 0))
        if t % 40 == 0:
            state.vec.compact()
    if case == "mkl":
        assert n_zeroed > 0  # the restart path was exercised


# -------------------------------------------------------------------- convergence
def test_spom_reaches_the_cvxpy_optimum_within_one_percent():
    import cvxpy as cp

    X, y, K, groups = make_problem(5, n=40)
    oracle = Multiclass(X, y, K)
    reg = MixedNorm(groups, p=1.0)
    lam = 0.05
    w = cp.Variable(oracle.dim)
    prob = cp.Problem(cp.Minimize(lam * reg.cvx_term(w) + oracle.cvx_risk(w)))
    prob.solve(solver="CLARABEL")
    opt = prob.value
    # eta0 of Prop. 3.2 (seed 000): F / (sqrt(2) G) with F = 2 ||w*|| the diameter of a ball holding the
    # iterates and G = sqrt(2) max_i ||x_i|| the Lipschitz constant of the hinge: ||w*|| / max_i ||x_i||
    eta0 = np.linalg.norm(w.value) / np.linalg.norm(X, axis=1).max()
    res = spom(oracle, reg, lam, epochs=60, eta0=eta0, seed=0)
    assert res.status == "completed" and res.epochs == 60
    h = res.history
    assert h.objective[0] == pytest.approx(oracle(np.zeros(oracle.dim)).value)
    assert res.objective == pytest.approx(lam * reg(res.w) + oracle(res.w).value, rel=1e-12)
    assert res.objective >= opt - 1e-6 * abs(opt)  # the cvxpy value is a true minimum
    assert res.objective - opt <= 0.01 * opt, (res.objective, opt)
    # regret-bound behaviour of the averaged model: the gap shrinks roughly like 1/sqrt(T)
    gap = h.objective - opt
    assert gap[5] / gap[20] >= 1.5 and gap[15] / gap[60] >= 1.5, gap[[5, 15, 20, 60]]
    # gamma="auto" (App. E): sqrt(2 R(0) / lam) contains the optimum, so the projection is vacuous
    res_g = spom(oracle, reg, lam, epochs=3, eta0=1.0, gamma="auto")
    assert res_g.gamma == pytest.approx(np.sqrt(2 * oracle(np.zeros(oracle.dim)).value / lam))
    assert np.linalg.norm(w.value) <= res_g.gamma


def test_inverse_schedule_on_l2_is_pegasos_like_and_converges():
    import cvxpy as cp

    X, y, K, groups = make_problem(7, n=40)
    oracle = Multiclass(X, y, K)
    lam = 0.2
    w = cp.Variable(oracle.dim)
    prob = cp.Problem(cp.Minimize(lam * 0.5 * cp.sum_squares(w) + oracle.cvx_risk(w)))
    prob.solve(solver="CLARABEL")
    res = spom(oracle, L2(), lam, epochs=60, schedule="inverse", averaged=False, seed=1)
    assert res.sigma == pytest.approx(lam)
    assert res.objective - prob.value <= 0.02 * prob.value


def test_seeded_runs_are_reproducible_and_seeds_matter():
    X, y, K, groups = make_problem(2)
    oracle = Multiclass(X, y, K)
    reg = MixedNorm(groups, p=1.0)
    a = spom(oracle, reg, 0.1, epochs=3, eta0=0.5, seed=11)
    b = spom(oracle, reg, 0.1, epochs=3, eta0=0.5, seed=11)
    c = spom(oracle, reg, 0.1, epochs=3, eta0=0.5, seed=12)
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.history.objective, b.history.objective)
    assert not np.array_equal(a.w, c.w)


def test_eta0_tuning_picks_the_best_candidate_and_is_seeded():
    X, y, K, groups = make_problem(4)
    oracle = Multiclass(X, y, K)
    reg = MixedNorm(groups, p=1.0)
    res = spom(oracle, reg, 0.1, epochs=1, eta0=None, eta_grid=(0.01, 0.3, 30.0), tune_samples=20, seed=3)
    assert set(res.tuning) == {0.01, 0.3, 30.0}
    assert res.eta0 == min(res.tuning, key=res.tuning.get)
    assert res.tune_time_s > 0
    again = spom(oracle, reg, 0.1, epochs=1, eta0=None, eta_grid=(0.01, 0.3, 30.0), tune_samples=20, seed=3)
    assert again.tuning == res.tuning


def test_history_callback_time_limit_and_eval_every():
    X, y, K, groups = make_problem(6)
    oracle = Multiclass(X, y, K)
    reg = MixedNorm(groups, p=1.0)
    seen = []
    res = spom(oracle, reg, 0.1, epochs=4, eta0=0.5, eval_every=10, callback=lambda info: seen.append(info))
    h = res.history
    assert len(h) == len(seen) + 1 and h.rounds[0] == 0
    assert np.all(np.diff(h.rounds) > 0) and h.rounds[-1] == 4 * X.shape[0] == res.n_rounds
    assert np.all(np.diff(h.train_time) >= 0) and np.all(h.wall_time >= h.train_time)
    np.testing.assert_allclose(h.passes, h.rounds / X.shape[0])
    assert [s.objective for s in seen] == list(h.objective[1:])
    stop = spom(oracle, reg, 0.1, epochs=4, eta0=0.5, callback=lambda info: True)
    assert stop.status == "callback" and stop.epochs == 1
    assert spom(oracle, reg, 0.1, epochs=50, eta0=0.5, time_limit=1e-9).status == "time_limit"


def test_full_vector_adapters_for_duck_typed_oracles():
    X, y, K, groups = make_problem(8)
    base = Multiclass(X, y, K)

    class Cut:
        def __init__(self, value, dphi):
            self.value, self.dphi = value, dphi

    class ParseLike:  # loss_augmented(i, w) -> (value, dphi) with subgradient -dphi, as ParseOracle
        n_samples, dim = base.n_samples, base.dim

        def loss_augmented(self, i, w):
            import scipy.sparse as sp

            sg = base.example_subgradient(i, w[base.example_support(i)])
            return Cut(
                sg.value, sp.csr_matrix((-sg.values, (np.zeros(sg.indices.size, int), sg.indices)), shape=(1, base.dim))
            )

    ex = as_example_oracle(ParseLike())
    assert ex.example_support(0) is None
    reg = MixedNorm(groups, p=1.0)
    a = spom(base, reg, 0.1, epochs=2, eta0=0.5, batch_oracle=base)
    b = spom(ParseLike(), reg, 0.1, epochs=2, eta0=0.5, batch_oracle=base)
    assert a.lazy and not b.lazy
    np.testing.assert_allclose(a.w, b.w, rtol=1e-12, atol=1e-14)


def test_parse_oracle_through_the_adapter():
    from oracles.parse_oracle import ArcFeatures, ParseOracle

    rng = np.random.default_rng(0)
    lengths, dim, rows = rng.integers(2, 5, size=6), 12, []
    for n in lengths:  # random binary features of every arc h -> m (none into the root or onto itself)
        for h in range(n + 1):
            for m in range(n + 1):
                k = 0 if m == 0 or h == m else int(rng.integers(1, 4))
                rows.append(np.sort(rng.choice(dim, size=k, replace=False)).astype(np.int32))
    feats = ArcFeatures(
        lengths,
        np.concatenate(([0], np.cumsum((lengths + 1) ** 2))),
        np.concatenate(([0], np.cumsum([r.size for r in rows]))),
        np.concatenate(rows),
        dim,
    )
    gold = [np.concatenate(([-1], [rng.integers(0, m) for m in range(1, n + 1)])) for n in lengths]
    oracle = ParseOracle(feats, gold)
    groups = np.arange(feats.dim) % 3
    reg = MixedNorm(groups, p=1.0)
    res = spom(oracle, reg, 0.1, epochs=5, eta0=0.1)
    assert res.history.objective[-1] < res.history.objective[0]
    assert res.objective == pytest.approx(0.1 * reg(res.w) + oracle(res.w).value, rel=1e-12)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(lam=0.0), "lam"),
        (dict(epochs=0), "epochs"),
        (dict(schedule="constant"), "schedule"),
        (dict(schedule="inverse"), "strongly convex"),
        (dict(gamma=-1.0), "gamma"),
        (dict(gamma="big"), "gamma"),
        (dict(eta0=-1.0), "eta0"),
        (dict(eval_every=0), "eval_every"),
        (dict(regularizer=object()), "group-norm"),
        (dict(regularizer=[(GroupLasso(), -1.0)]), "weight"),
    ],
)
def test_bad_input_raises_one_clear_error(kwargs, match):
    X, y, K, groups = make_problem(1)
    args = dict(oracle=Multiclass(X, y, K), regularizer=MixedNorm(groups, p=1.0), lam=0.1, epochs=1, eta0=0.5)
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        spom(**args)
    with pytest.raises(InputError, match="per-example"):
        as_example_oracle(object())


@settings(max_examples=80)
@given(b=st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 1e3)), min_size=1, max_size=25), tau=st.floats(1e-5, 1e2))
def test_group_terms_prox_on_norms_equals_the_prox_functions(b, tau):
    from cutplane.prox import prox_l1, prox_squared_l1, prox_squared_lp

    b = np.array(b)
    np.testing.assert_allclose(
        SquaredGroupNorm(1.0).prox_norms(b, tau), prox_squared_l1(b, tau), rtol=1e-12, atol=1e-12 * b.max()
    )
    np.testing.assert_allclose(SquaredGroupNorm(1.5).prox_norms(b, tau), prox_squared_lp(b, tau, 1.5), rtol=1e-12)
    np.testing.assert_allclose(GroupLasso().prox_norms(b, tau), prox_l1(b, tau), rtol=1e-12)
    np.testing.assert_allclose(GroupPower(2.0).prox_norms(b, tau), b / (1 + 2 * tau), rtol=1e-12)
    # values on norms: 1/2 ||b||_p^2, sum b, sum b^q
    assert SquaredGroupNorm(1.0).value(b) == pytest.approx(0.5 * b.sum() ** 2)
    assert GroupPower(3.0).value(b) == pytest.approx(np.sum(b**3))
