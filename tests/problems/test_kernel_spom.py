"""Kernelised SPOM (seed 000 sec. 3.4) against explicit SPOM on the explicit feature maps.

Linear and quadratic kernels have explicit maps (``x`` and ``vec(x x^T)``), so the same
problem can be run both ways with the same seed and order: the kernel expansion mapped back to
weights (``W_m[y] = X_m^T A_m[:, y]``) must equal the explicit iterate, and the group norms
tracked by eq. (17) must equal the exact RKHS norms, round after round.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from cutplane.online import ExampleSubgradient, spom
from cutplane.online.group_terms import GroupLasso, SquaredGroupNorm, as_group_terms
from cutplane.online.spom import OnlineProximal
from problems.mkl.kernel_spom import KernelProximal, PrecomputedKernelExamples, kernel_spom


class ExplicitHinge:
    """Binary / multiclass hinge on explicit per-group features, w laid out group by group
    (``W_m`` of shape (K, d_m) flattened), support None (full w): the reference."""

    def __init__(self, feats, y, loss):
        self.feats = feats
        self.classes, self.codes = np.unique(y, return_inverse=True)
        self.loss = loss
        self.K = 1 if loss == "binary" else self.classes.size
        self.sizes = [self.K * X.shape[1] for X in feats]
        self.offsets = np.concatenate(([0], np.cumsum(self.sizes)))
        self.n_samples, self.dim = feats[0].shape[0], int(self.offsets[-1])
        self.groups = np.repeat(np.arange(len(feats)), self.sizes)

    def blocks(self, w):
        return [w[a:b].reshape(self.K, X.shape[1]) for a, b, X in zip(self.offsets, self.offsets[1:], self.feats)]

    def example_support(self, i):
        return None

    def example_subgradient(self, i, w):
        W = self.blocks(w)
        s = sum(Wm @ X[i] for Wm, X in zip(W, self.feats))
        g = np.zeros(self.dim)
        if self.loss == "binary":
            sign = 1.0 if self.codes[i] == 1 else -1.0
            value = 1.0 - sign * s[0]
            if not value > 0:
                return ExampleSubgradient(0.0, np.empty(0, np.int64), np.empty(0))
            for m, X in enumerate(self.feats):
                g[self.offsets[m] : self.offsets[m + 1]] = -sign * X[i]
        else:
            yi = self.codes[i]
            aug = (np.arange(self.K) != yi) + s - s[yi]
            yhat = int(np.argmax(aug))
            if yhat == yi:
                return ExampleSubgradient(0.0, np.empty(0, np.int64), np.empty(0))
            value = aug[yhat]
            for m, X in enumerate(self.feats):
                d = X.shape[1]
                g[self.offsets[m] + yhat * d : self.offsets[m] + (yhat + 1) * d] += X[i]
                g[self.offsets[m] + yi * d : self.offsets[m] + (yi + 1) * d] -= X[i]
        nz = np.flatnonzero(g)
        return ExampleSubgradient(float(value), nz, g[nz])

    def from_coef(self, coef):
        """Explicit w of a kernel expansion: coef of shape (M, n, K)."""
        return np.concatenate([(X.T @ coef[m]).T.ravel() for m, X in enumerate(self.feats)])


def make_problem(seed, n=30, d=3, n_classes=3, sparse=False):
    rng = np.random.default_rng(seed)
    if sparse:  # binary bag-of-features: many pairs share nothing, the linear Gram is sparse
        X = (rng.random((n, 12)) < 0.12).astype(float)
        feats = [X, X[:, :6] * 2.0]
    else:
        X = rng.normal(size=(n, d)) / np.sqrt(d)
        feats = [X, np.einsum("ni,nj->nij", X, X).reshape(n, -1)]  # linear, quadratic (x^T x')^2
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    grams = [F @ F.T for F in feats]
    if sparse:
        grams = [sp.csr_matrix(G) for G in grams]
    return feats, grams, y


def _lockstep(feats, grams, y, loss, terms, lam, eta0, gamma, order):
    ref = ExplicitHinge(feats, y, loss)
    kex = PrecomputedKernelExamples(grams, y, loss=loss)
    M = len(feats)
    exp = OnlineProximal(ref, terms, lam, ref.groups, M, eta0=eta0, gamma=gamma, averaged=True)
    ker = KernelProximal(kex, terms, lam, eta0=eta0, gamma=gamma, averaged=True)
    n = len(y)
    for k, i in enumerate(order):
        va, vb = exp.step(int(i)), ker.step(int(i))
        assert va == pytest.approx(vb, rel=1e-9, abs=1e-9)
        w_exp = exp.w_last()
        np.testing.assert_allclose(ref.from_coef(kex.as_table(ker.w_last())), w_exp, rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(ker.group_norms(), exp.vec.norms(), rtol=1e-8, atol=1e-8)
        exact = np.sqrt(kex.group_sqnorms(ker.w_last()))  # eq. (17) bookkeeping vs the exact RKHS norms
        np.testing.assert_allclose(ker.group_norms(), exact, rtol=1e-8, atol=1e-8)
        if (k + 1) % n == 0:
            exp.compact()
            ker.compact()
    np.testing.assert_allclose(ref.from_coef(kex.as_table(ker.w_average())), exp.w_average(), rtol=1e-8, atol=1e-8)
    assert exp.regularizer_value(exp.w_average()) == pytest.approx(
        ker.regularizer_value(ker.w_average()), rel=1e-8, abs=1e-10
    )
    return exp, ker


@pytest.mark.parametrize("loss, n_classes", [("multiclass", 3), ("binary", 2)])
@pytest.mark.parametrize(
    "terms", [SquaredGroupNorm(1.0), [(GroupLasso(), 0.05), (SquaredGroupNorm(2.0), 1.0)]], ids=["mkl", "elastic"]
)
def test_kernel_iterates_equal_explicit_iterates_round_by_round(loss, n_classes, terms):
    feats, grams, y = make_problem(0, n_classes=n_classes)
    order = np.random.default_rng(1).permutation(np.tile(np.arange(len(y)), 3))
    exp, ker = _lockstep(feats, grams, y, loss, as_group_terms(terms), 0.05, 0.5, None, order)
    assert np.count_nonzero(exp.w_last()) > 0  # the comparison was not between two zero vectors


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    lam=st.sampled_from([0.01, 0.1, 1.0]),
    eta0=st.sampled_from([0.1, 1.0]),
    gamma=st.sampled_from([None, 0.5]),
    sparse=st.booleans(),
)
def test_kernel_equals_explicit_property(seed, lam, eta0, gamma, sparse):
    feats, grams, y = make_problem(seed, n=16, sparse=sparse)
    order = np.random.default_rng(seed).integers(0, len(y), size=40)
    _lockstep(feats, grams, y, "multiclass", as_group_terms(SquaredGroupNorm(1.0)), lam, eta0, gamma, order)


@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_spom_run_equals_explicit_spom_run(sparse):
    """Same seed, same epochs, same eta0 and gamma='auto': identical objective curves and models."""
    feats, grams, y = make_problem(3, n=40, sparse=sparse)
    ref = ExplicitHinge(feats, y, "multiclass")
    kw = dict(epochs=4, eta0=0.3, seed=7, gamma="auto")
    a = spom(ref, SquaredGroupNorm(1.0), 0.1, groups=ref.groups, n_groups=2, **kw)
    b = kernel_spom(grams, y, 0.1, **kw)
    np.testing.assert_allclose(b.history.objective, a.history.objective, rtol=1e-8)
    np.testing.assert_allclose(ref.from_coef(b.coef), a.w, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(ref.from_coef(b.coef_last), a.w_last, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(b.group_norms, a.group_norms, rtol=1e-8, atol=1e-10)
    assert b.gamma == pytest.approx(a.gamma)
    assert b.objective < b.history.objective[0]
    scores = b.decision_function(grams)  # training points: the cross Gram is the Gram
    W = ref.blocks(a.w)
    explicit_scores = sum(X @ Wm.T for Wm, X in zip(W, feats))
    np.testing.assert_allclose(scores, explicit_scores, rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(b.predict(grams), b.classes[np.argmax(explicit_scores, axis=1)])


def test_eta0_tuning_and_binary_labels():
    feats, grams, y = make_problem(5, n=30, n_classes=2)
    labels = np.where(y == 1, "pos", "neg")
    a = kernel_spom(grams, labels, 0.1, epochs=2, eta0=None, eta_grid=(0.01, 1.0), tune_samples=10, seed=2)
    b = kernel_spom(grams, labels, 0.1, epochs=2, eta0=None, eta_grid=(0.01, 1.0), tune_samples=10, seed=2)
    assert a.loss == "binary" and a.coef.shape == (2, 30, 1)
    assert a.eta0 in (0.01, 1.0) and a.eta0 == min(a.tuning, key=a.tuning.get)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert set(a.predict(grams)) <= {"pos", "neg"}


def test_sparse_gram_reads_only_the_row_support():
    _, grams, y = make_problem(2, n=30, sparse=True)
    kex = PrecomputedKernelExamples(grams, y)
    dense = PrecomputedKernelExamples([G.toarray() for G in grams], y)
    nnz = sum(G[4].nnz for G in grams)
    assert kex.example_support(4).size == nnz * kex.n_outputs < dense.example_support(4).size
    coef = np.random.default_rng(0).normal(size=kex.dim)
    a = kex.example_subgradient(4, coef[kex.example_support(4)])
    b = dense.example_subgradient(4, coef[dense.example_support(4)])
    assert a.value == pytest.approx(b.value)
    np.testing.assert_allclose(a.inner, b.inner)


@pytest.mark.parametrize(
    "grams, y, kwargs, field",
    [
        ([np.eye(3), np.eye(4)], [0, 1, 0], {}, "grams"),
        ([np.ones((3, 2))], [0, 1, 0], {}, "grams"),
        ([np.full((3, 3), np.nan)], [0, 1, 0], {}, "grams"),
        ([], [0, 1, 0], {}, "grams"),
        ([np.eye(3)], [0, 0, 0], {}, "y"),
        ([np.eye(3)], [0, 1], {}, "y"),
        ([np.eye(3)], [0, 1, 2], {"loss": "binary"}, "y"),
        ([np.eye(3)], [0, 1, 2], {"loss": "hinge"}, "loss"),
        ([np.eye(3)], [0, 1, 2], {"lam": 0.0}, "lam"),
        ([np.eye(3)], [0, 1, 2], {"epochs": 0}, "epochs"),
    ],
)
def test_bad_input_raises_one_clear_error(grams, y, kwargs, field):
    kwargs = {"lam": 0.1, **kwargs}
    with pytest.raises(InputError) as err:
        kernel_spom(grams, y, **kwargs)
    assert err.value.field == field
