"""KelleyMKL (problems/mkl/kelley.py): against a direct cvxpy solve of the MKL QCQP, primal recovery
of eq. 27, kernel-weight sparsity, one-vs-rest variants, bad input, and model files (save /
load round trips predicting identically)."""
import warnings

import numpy as np
import pytest

from cutplane.exceptions import InputError, ModelFormatError
from problems import KelleyMKL
from problems.mkl.kernels import GaussianKernel, LinearKernel, NotPSDWarning, PolynomialKernel


def _gauss(Z, gamma):
    sq = (Z ** 2).sum(1)
    return np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * Z @ Z.T, 0.0))


def _problem(n=50, seed=0):
    """Three Gram matrices on overlapping feature blocks; the optimal beta is interior."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    y = np.where(X[:, 0] + X[:, 2] * X[:, 3] + 0.6 * X[:, 1] ** 2 - 0.5
                 + 0.4 * rng.standard_normal(n) > 0, 1, -1)
    return [X[:, :2] @ X[:, :2].T, _gauss(X[:, 1:4], 0.3), _gauss(X, 0.05)], y


def _psd_factor(K):
    w, V = np.linalg.eigh(K)
    return V * np.sqrt(np.clip(w, 0.0, None))


def _mkl_qcqp(grams, Y, C):
    """Lanckriet/Bach dual of (21), summed over the columns of Y (one-vs-rest, shared beta):

        max  sum_c 1^T alpha_c - t   s.t.  sum_c 1/2 (y_c o alpha_c)^T K_k (y_c o alpha_c) <= t  (all k),
             0 <= alpha_c <= C,  y_c^T alpha_c = 0.

    Returns the optimal value, beta (the duals of the K constraints), and the value of the
    solver's alpha made exactly feasible (a certified lower bound on min D, in numpy).
    """
    import cvxpy as cp

    n, m = Y.shape
    A = cp.Variable((n, m))
    t = cp.Variable()
    Ls = [_psd_factor(K) for K in grams]
    cons = [0.5 * sum(cp.sum_squares(L.T @ cp.multiply(Y[:, c], A[:, c])) for c in range(m)) <= t
            for L in Ls]
    box = [A >= 0, A <= C] + [Y[:, c] @ A[:, c] == 0 for c in range(m)]
    prob = cp.Problem(cp.Maximize(cp.sum(A) - t), cons + box)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    beta = np.array([c.dual_value.item() for c in cons])
    alpha = np.clip(A.value, 0.0, C)
    for c in range(m):               # equalise the two sides of y^T alpha = 0 by scaling down
        pos, neg = Y[:, c] > 0, Y[:, c] < 0
        sp_, sn = alpha[pos, c].sum(), alpha[neg, c].sum()
        alpha[pos if sp_ > sn else neg, c] *= min(sp_, sn) / max(sp_, sn)
    V = Y * alpha
    certified = alpha.sum() - max(0.5 * sum(V[:, c] @ K @ V[:, c] for c in range(m)) for K in grams)
    return prob.value, beta / beta.sum(), certified


def _D(grams, y, C, beta):
    from oracles.mkl import SVMDualOracle

    return SVMDualOracle(grams, y, C)(beta).value


@pytest.mark.parametrize("C", [1.0, 10.0])
def test_objective_and_beta_match_cvxpy_qcqp(C):
    grams, y = _problem()
    eps = 1e-6
    model = KelleyMKL(grams, C=C, eps=eps).fit(None, y)
    ref, beta_ref, certified = _mkl_qcqp(grams, y[:, None].astype(float), C)
    res = model.result_
    # the certified gap D(beta_{t-1}) - D_t(beta_t) <= eps at exit, with exact cuts
    assert res.status == "converged" and res.exact
    assert model.gap_ <= eps and res.history.gap[-1] <= eps
    # reference accuracy: its own feasible alpha certifies it to ~1e-7 relative
    ref_tol = 1e-7 * abs(ref)
    assert abs(ref - certified) <= ref_tol
    # objective within eps of the QCQP, and the two certified bounds bracket it
    assert abs(model.objective_ - ref) <= eps + ref_tol
    assert model.lower_bound_ <= ref + ref_tol and certified <= model.objective_ + ref_tol
    # beta: D grows at least quadratically around the interior minimiser beta_ref,
    # D(beta) - D* >= mu/2 ||beta - beta_ref||^2 with mu the smallest curvature of D on the
    # simplex (finite differences of the oracle), so ||beta - beta_ref|| <= sqrt(2 (eps + ref_tol) / mu);
    # a factor 2 covers the variation of the curvature inside that ball.
    assert beta_ref.min() > 0.05
    h = min(0.02, beta_ref.min() / 3)
    dirs = [np.array([1.0, -1.0, 0.0]) / np.sqrt(2), np.array([1.0, 1.0, -2.0]) / np.sqrt(6)]
    H = np.empty((2, 2))
    for i, di in enumerate(dirs):
        for j, dj in enumerate(dirs):
            pts = [beta_ref + h * (si * di + sj * dj) for si in (1, -1) for sj in (1, -1)]
            d = [_D(grams, y, C, p) for p in pts]
            H[i, j] = (d[0] - d[1] - d[2] + d[3]) / (4 * h * h)
    mu = np.linalg.eigvalsh(0.5 * (H + H.T))[0]
    assert mu > 1.0                                    # the bound below is informative
    tol_beta = 2.0 * np.sqrt(2.0 * (eps + ref_tol) / mu)
    assert np.linalg.norm(model.kernel_weights_ - beta_ref) <= tol_beta
    assert tol_beta < 0.01


def test_shared_one_vs_rest_matches_summed_qcqp():
    rng = np.random.default_rng(7)
    n = 30
    X = rng.standard_normal((n, 4))
    labels = np.digitize(X[:, 0] + 0.5 * X[:, 1] ** 2, [-0.3, 0.6])
    grams = [X @ X.T, _gauss(X[:, :2], 0.5), _gauss(X, 0.1)]
    eps = 1e-5
    model = KelleyMKL(grams, C=1.0, eps=eps, multiclass="shared").fit(None, labels)
    Y = np.where(labels[:, None] == np.arange(3)[None, :], 1.0, -1.0)
    ref, beta_ref, certified = _mkl_qcqp(grams, Y, 1.0)
    assert model.gap_ <= eps and model.result_.exact
    assert abs(model.objective_ - ref) <= eps + 1e-7 * abs(ref)
    assert model.kernel_weights_.shape == (3,)
    assert model.dual_coef_.shape[0] == 3 and model.intercept_.shape == (3,)


def test_per_class_weights_equal_separate_binary_fits():
    rng = np.random.default_rng(8)
    n = 36
    X = rng.standard_normal((n, 4))
    labels = np.array(list("abc"))[np.digitize(X[:, 0] - X[:, 2], [-0.4, 0.4])]
    grams = [X[:, :2] @ X[:, :2].T, _gauss(X, 0.2), _gauss(X[:, 2:], 0.5)]
    model = KelleyMKL(grams, C=2.0, eps=1e-6, multiclass="per-class").fit(None, labels)
    assert model.kernel_weights_.shape == (3, 3) and isinstance(model.result_, list)
    total = 0.0
    for c, name in enumerate(model.classes_):
        binary = KelleyMKL(grams, C=2.0, eps=1e-6).fit(None, np.where(labels == name, 1, -1))
        assert abs(model.result_[c].objective - binary.objective_) <= 2e-6
        total += binary.objective_
    assert model.objective_ == pytest.approx(total, abs=6e-6)


@pytest.mark.parametrize("multiclass", ["binary", "shared"])
def test_primal_weights_of_eq27_classify_like_the_kernel_expansion(multiclass):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 4))
    X_test = rng.standard_normal((40, 4))
    if multiclass == "binary":
        y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, 1, -1)
    else:
        y = np.digitize(X[:, 0] * X[:, 1] + 0.3 * X[:, 2], [-0.3, 0.3])
    kernels = [LinearKernel(), PolynomialKernel(degree=2, normalize=True), PolynomialKernel(degree=1, coef0=1.0)]
    model = KelleyMKL(kernels, C=1.0, eps=1e-5, multiclass="shared").fit(X, y)
    W = model.primal_weights([k.feature_map(X) for k in kernels])
    h = sum(np.asarray(k.feature_map(X_test) @ Wk.T) for k, Wk in zip(kernels, W)) + model.intercept_
    scores = model.decision_function(X_test)
    scores2d = scores[:, None] if scores.ndim == 1 else scores
    np.testing.assert_allclose(h, scores2d, rtol=1e-8, atol=1e-8)
    pred_primal = (model.classes_[(h[:, 0] > 0).astype(int)] if scores.ndim == 1
                   else model.classes_[np.argmax(h, axis=1)])
    np.testing.assert_array_equal(pred_primal, model.predict(X_test))
    # the recovered w_k also satisfy eq. 27's norm identity: ||w_k||^2 / beta_k = beta_k q_k
    beta = model.kernel_weights_
    grams = [k(X) for k in kernels]
    for k, Wk in enumerate(W):
        for c in range(Wk.shape[0]):
            v = np.zeros(60)
            v[model.support_] = model.dual_coef_[c]
            assert Wk[c] @ Wk[c] == pytest.approx(beta[k] ** 2 * (v @ grams[k] @ v), rel=1e-8, abs=1e-10)


def test_bias_is_the_mean_over_free_support_vectors():
    grams, y = _problem(seed=2)
    C = 1.0
    model = KelleyMKL(grams, C=C, eps=1e-6).fit(None, y)
    beta = model.kernel_weights_
    K = sum(b * G for b, G in zip(beta, grams))
    v = np.zeros(len(y))
    v[model.support_] = model.dual_coef_[0]
    alpha = np.abs(v)
    f = K @ v
    free = (alpha > 1e-8 * C) & (alpha < C - 1e-8 * C)
    assert free.sum() >= 1
    assert model.intercept_[0] == pytest.approx(np.mean(y[free] - f[free]), abs=1e-9)
    # the KKT conditions hold on the free vectors: y_i (f_i + b) = 1
    np.testing.assert_allclose(y[free] * (f[free] + model.intercept_[0]), 1.0, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_one_informative_kernel_gets_the_weight(seed):
    rng = np.random.default_rng(seed)
    n = 60
    Xi = rng.standard_normal((n, 2))
    y = np.where(Xi[:, 0] + Xi[:, 1] > 0, 1, -1)
    noise = [rng.standard_normal((n, 3)) for _ in range(4)]
    g = GaussianKernel(gamma=0.1)
    model = KelleyMKL([g(Xi)] + [g(Z) for Z in noise], C=1.0, eps=1e-4).fit(None, y)
    assert model.gap_ <= 1e-4
    assert model.kernel_weights_[0] > 0.9


def test_callables_and_precomputed_grams_agree():
    rng = np.random.default_rng(5)
    X, X_test = rng.standard_normal((40, 3)), rng.standard_normal((15, 3))
    y = np.where(X[:, 0] - X[:, 1] ** 2 + 0.5 > 0, "pos", "neg")
    kernels = [LinearKernel(), GaussianKernel(0.3), PolynomialKernel(2, normalize=True)]
    a = KelleyMKL(kernels, C=1.0, eps=1e-6).fit(X, y)
    b = KelleyMKL([k(X) for k in kernels], C=1.0, eps=1e-6).fit(None, y)
    np.testing.assert_allclose(a.kernel_weights_, b.kernel_weights_, atol=1e-9)
    test_grams = [k(X_test, X) for k in kernels]
    np.testing.assert_allclose(a.decision_function(X_test), b.decision_function(test_grams), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(a.predict(X_test), b.predict(test_grams))
    assert set(a.predict(X_test)) <= {"pos", "neg"}
    assert 0.0 <= a.score(X, y) <= 1.0
    # the expansion only uses support vectors
    assert a.support_vectors_.shape == (a.support_.size, 3)


def test_non_psd_kernel_warns_with_most_negative_eigenvalue():
    grams, y = _problem(n=30)
    bad = grams[1] - 0.5 * np.eye(30)                   # eigenvalues shifted by -0.5
    lowest = np.linalg.eigvalsh(bad)[0]
    with pytest.warns(NotPSDWarning, match="most negative eigenvalue") as rec:
        KelleyMKL([grams[0], bad], C=1.0, eps=1e-3).fit(None, y)
    assert any(f"{lowest:.6g}" in str(w.message) for w in rec)


def test_bad_input():
    grams, y = _problem(n=20)
    with pytest.raises(InputError, match="same samples"):
        KelleyMKL([grams[0], grams[1][:10, :10]]).fit(None, y)
    for C in (0.0, -1.0):
        with pytest.raises(InputError, match="C"):
            KelleyMKL(grams, C=C).fit(None, y)
    y3 = np.arange(20) % 3
    with pytest.raises(InputError, match="binary"):
        KelleyMKL(grams, multiclass="none").fit(None, y3)
    with pytest.raises(InputError, match="classes"):
        KelleyMKL(grams).fit(None, np.ones(20))
    with pytest.raises(InputError, match="continuous"):
        KelleyMKL(grams).fit(None, np.linspace(0, 1, 20))
    with pytest.raises(InputError, match="labels"):
        KelleyMKL(grams).fit(None, y[:10])
    with pytest.raises(InputError, match="fit\\(None, y\\)"):
        KelleyMKL(grams).fit(np.zeros((20, 2)), y)
    with pytest.raises(InputError, match="needs the samples"):
        KelleyMKL([LinearKernel()]).fit(None, y)
    with pytest.raises(InputError, match="mix"):
        KelleyMKL([LinearKernel(), grams[0]]).fit(np.zeros((20, 2)), y)
    with pytest.raises(InputError, match="list"):
        KelleyMKL(grams[0]).fit(None, y)
    with pytest.raises(InputError, match="multiclass"):
        KelleyMKL(grams, multiclass="ovo").fit(None, y)
    model = KelleyMKL(grams, eps=1e-3).fit(None, y)
    with pytest.raises(InputError, match="test Gram"):
        model.predict([np.zeros((5, 20)), np.zeros((5, 19)), np.zeros((5, 20))])
    with pytest.raises(InputError, match="list of test-vs-train"):
        model.predict(np.zeros((5, 20)))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        KelleyMKL(grams).predict([g[:5] for g in grams])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # PSD input: no warning at all
        KelleyMKL(grams, eps=1e-3).fit(None, y)


def test_max_iter_warns_once_with_the_certified_gap():
    from cutplane.exceptions import ConvergenceWarning

    grams, y = _problem(n=30)
    with pytest.warns(ConvergenceWarning) as rec:
        model = KelleyMKL(grams, C=1.0, eps=1e-9, max_iter=2).fit(None, y)
    assert len([w for w in rec if issubclass(w.category, ConvergenceWarning)]) == 1
    assert model.result_.status == "max_iter" and model.n_iter_ == 2
    assert model.gap_ > 1e-9 and model.lower_bound_ <= model.objective_
    # the returned weights are the engine's best point, and the model is usable
    assert model.objective_ == pytest.approx(min(model.result_.history.upper))
    assert model.predict([g for g in grams]).shape == (30,)


# ------------------------------------------------------------------------------ model files
@pytest.mark.parametrize("multiclass, n_classes", [("shared", 2), ("shared", 3), ("per-class", 3)])
def test_save_load_roundtrip_with_kernel_objects(tmp_path, multiclass, n_classes):
    import scipy.sparse as sp

    from problems.mkl.kernels import B1SplineKernel

    rng = np.random.default_rng(4)
    X, X_test = rng.standard_normal((45, 3)), rng.standard_normal((20, 3))
    f = X[:, 0] - X[:, 1] ** 2
    labels = np.array(["a", "b", "c"])[np.digitize(f, np.quantile(f, np.linspace(0, 1, n_classes + 1)[1:-1]))]
    kernels = [LinearKernel(), GaussianKernel(0.3), PolynomialKernel(2, coef0=0.5, normalize=True),
               B1SplineKernel(3.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotPSDWarning)
        model = KelleyMKL(kernels, C=1.0, eps=1e-3, multiclass=multiclass).fit(X, labels)
    back = KelleyMKL.load(model.save(tmp_path / "mkl.npz"))
    assert [repr(k) for k in back.kernels] == [repr(k) for k in kernels]
    np.testing.assert_array_equal(back.predict(X_test), model.predict(X_test))
    np.testing.assert_array_equal(back.decision_function(X_test), model.decision_function(X_test))
    np.testing.assert_array_equal(back.kernel_weights_, model.kernel_weights_)
    assert back.get_params(deep=False).keys() == model.get_params(deep=False).keys()
    assert (back.objective_, back.gap_, back.n_iter_) == (model.objective_, model.gap_, model.n_iter_)
    # sparse samples keep their support vectors sparse
    sparse_model = KelleyMKL([LinearKernel(), GaussianKernel(0.3)], C=1.0, eps=1e-3).fit(sp.csr_matrix(X), f > 0)
    again = KelleyMKL.load(sparse_model.save(tmp_path / "sparse.npz"))
    assert sp.issparse(again.support_vectors_)
    np.testing.assert_array_equal(again.predict(X_test), sparse_model.predict(X_test))


def test_save_load_precomputed_grams_and_wrappers(tmp_path):
    from problems.mkl.wrappers import GaussSeidelMKL

    grams, y = _problem(n=40)
    rng = np.random.default_rng(0)
    test_grams = [G[rng.permutation(40)[:15]] for G in grams]  # rows of training points as "test" points
    for cls in (KelleyMKL, GaussSeidelMKL):
        model = cls(grams, C=1.0, eps=1e-3).fit(None, y)
        back = cls.load(model.save(tmp_path / f"{cls.__name__}.npz"))
        assert back.kernels is None  # precomputed Gram matrices are not saved
        np.testing.assert_array_equal(back.decision_function(test_grams), model.decision_function(test_grams))
        np.testing.assert_array_equal(back.predict(grams), model.predict(grams))
        with pytest.raises(InputError, match="refit"):
            back.fit(None, y)
    with pytest.raises(ModelFormatError):  # a GaussSeidelMKL file is not a KelleyMKL model
        KelleyMKL.load(tmp_path / "GaussSeidelMKL.npz")


def test_save_rejects_foreign_callables_and_load_rejects_bad_files(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    model = KelleyMKL([LinearKernel(), lambda A, B=None: A @ (A if B is None else B).T], C=1.0, eps=1e-3).fit(X, y)
    with pytest.raises(InputError) as err:
        model.save(tmp_path / "m.npz")
    assert err.value.field == "kernels"
    good = KelleyMKL([LinearKernel(), GaussianKernel(0.5)], C=1.0, eps=1e-3).fit(X, y)
    path = good.save(tmp_path / "good.npz")
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError):
        KelleyMKL.load(tmp_path / "cut.npz")
    from problems.model_io import load_model, save_model

    arrays, meta = load_model(path)
    meta = {k: v for k, v in meta.items() if k not in ("format", "format_version", "arrays")}
    bad = dict(meta, kernels=[{"name": "os.system", "params": {}}, meta["kernels"][1]])
    with pytest.raises(ModelFormatError):
        KelleyMKL.load(save_model(tmp_path / "bad_kernel.npz", arrays, bad))
    with pytest.raises(ModelFormatError):
        KelleyMKL.load(save_model(tmp_path / "bad_support.npz", dict(arrays, support=arrays["support"] + 1000), meta))
    with pytest.raises(ModelFormatError):
        KelleyMKL.load(save_model(tmp_path / "no_sv.npz", {k: v for k, v in arrays.items()
                                                           if k != "support_vectors"}, meta))
