"""MKL with Kelley's cutting planes (problems/mkl/estimator.py, ``solver=CuttingPlane(method="kelley")``):
against a direct cvxpy solve of the MKL QCQP, primal recovery of eq. 27, kernel-weight sparsity,
one-vs-rest variants, bad input, model files (save / load round trips predicting identically, files
of the former estimators), and the solver object (get_params, clone, GridSearchCV, checks at fit)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError, ModelFormatError
from problems import MKL
from problems.mkl import Wrapper
from problems.mkl.kernels import GaussianKernel, LinearKernel, NotPSDWarning, PolynomialKernel
from problems.solvers import CuttingPlane


def kelley(**options):
    """Kelley's cutting-plane method as MKL's solver."""
    return CuttingPlane(method="kelley", **options)


def _gauss(Z, gamma):
    sq = (Z**2).sum(1)
    return np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * Z @ Z.T, 0.0))


def _problem(n=50, seed=0):
    """Three Gram matrices on overlapping feature blocks; the optimal beta is interior."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    y = np.where(X[:, 0] + X[:, 2] * X[:, 3] + 0.6 * X[:, 1] ** 2 - 0.5 + 0.4 * rng.standard_normal(n) > 0, 1, -1)
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
    cons = [0.5 * sum(cp.sum_squares(L.T @ cp.multiply(Y[:, c], A[:, c])) for c in range(m)) <= t for L in Ls]
    box = [A >= 0, A <= C] + [Y[:, c] @ A[:, c] == 0 for c in range(m)]
    prob = cp.Problem(cp.Maximize(cp.sum(A) - t), cons + box)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    beta = np.array([c.dual_value.item() for c in cons])
    alpha = np.clip(A.value, 0.0, C)
    for c in range(m):  # equalise the two sides of y^T alpha = 0 by scaling down
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
    model = MKL(grams, C=C, solver=kelley(eps=eps)).fit(None, y)
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
    assert mu > 1.0  # the bound below is informative
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
    model = MKL(grams, C=1.0, multiclass="shared", solver=kelley(eps=eps)).fit(None, labels)
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
    model = MKL(grams, C=2.0, multiclass="per-class", solver=kelley(eps=1e-6)).fit(None, labels)
    assert model.kernel_weights_.shape == (3, 3) and isinstance(model.result_, list)
    total = 0.0
    for c, name in enumerate(model.classes_):
        binary = MKL(grams, C=2.0, solver=kelley(eps=1e-6)).fit(None, np.where(labels == name, 1, -1))
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
    model = MKL(kernels, C=1.0, multiclass="shared", solver=kelley(eps=1e-5)).fit(X, y)
    W = model.primal_weights([k.feature_map(X) for k in kernels])
    h = sum(np.asarray(k.feature_map(X_test) @ Wk.T) for k, Wk in zip(kernels, W)) + model.intercept_
    scores = model.decision_function(X_test)
    scores2d = scores[:, None] if scores.ndim == 1 else scores
    np.testing.assert_allclose(h, scores2d, rtol=1e-8, atol=1e-8)
    pred_primal = (
        model.classes_[(h[:, 0] > 0).astype(int)] if scores.ndim == 1 else model.classes_[np.argmax(h, axis=1)]
    )
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
    model = MKL(grams, C=C, solver=kelley(eps=1e-6)).fit(None, y)
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
    model = MKL([g(Xi)] + [g(Z) for Z in noise], C=1.0, solver=kelley(eps=1e-4)).fit(None, y)
    assert model.gap_ <= 1e-4
    assert model.kernel_weights_[0] > 0.9


def test_callables_and_precomputed_grams_agree():
    rng = np.random.default_rng(5)
    X, X_test = rng.standard_normal((40, 3)), rng.standard_normal((15, 3))
    y = np.where(X[:, 0] - X[:, 1] ** 2 + 0.5 > 0, "pos", "neg")
    kernels = [LinearKernel(), GaussianKernel(0.3), PolynomialKernel(2, normalize=True)]
    a = MKL(kernels, C=1.0, solver=kelley(eps=1e-6)).fit(X, y)
    b = MKL([k(X) for k in kernels], C=1.0, solver=kelley(eps=1e-6)).fit(None, y)
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
    bad = grams[1] - 0.5 * np.eye(30)  # eigenvalues shifted by -0.5
    lowest = np.linalg.eigvalsh(bad)[0]
    with pytest.warns(NotPSDWarning, match="most negative eigenvalue") as rec:
        MKL([grams[0], bad], C=1.0, solver=kelley(eps=1e-3)).fit(None, y)
    assert any(f"{lowest:.6g}" in str(w.message) for w in rec)


def test_bad_input():
    grams, y = _problem(n=20)
    with pytest.raises(InputError, match="same samples"):
        MKL([grams[0], grams[1][:10, :10]]).fit(None, y)
    for C in (0.0, -1.0):
        with pytest.raises(InputError, match="C"):
            MKL(grams, C=C).fit(None, y)
    y3 = np.arange(20) % 3
    with pytest.raises(InputError, match="binary"):
        MKL(grams, multiclass="none").fit(None, y3)
    with pytest.raises(InputError, match="classes"):
        MKL(grams).fit(None, np.ones(20))
    with pytest.raises(InputError, match="continuous"):
        MKL(grams).fit(None, np.linspace(0, 1, 20))
    with pytest.raises(InputError, match="labels"):
        MKL(grams).fit(None, y[:10])
    with pytest.raises(InputError, match="fit\\(None, y\\)"):
        MKL(grams).fit(np.zeros((20, 2)), y)
    with pytest.raises(InputError, match="needs the samples"):
        MKL([LinearKernel()]).fit(None, y)
    with pytest.raises(InputError, match="mix"):
        MKL([LinearKernel(), grams[0]]).fit(np.zeros((20, 2)), y)
    with pytest.raises(InputError, match="list"):
        MKL(grams[0]).fit(None, y)
    with pytest.raises(InputError, match="multiclass"):
        MKL(grams, multiclass="ovo").fit(None, y)
    model = MKL(grams, solver=kelley(eps=1e-3)).fit(None, y)
    with pytest.raises(InputError, match="test Gram"):
        model.predict([np.zeros((5, 20)), np.zeros((5, 19)), np.zeros((5, 20))])
    with pytest.raises(InputError, match="list of test-vs-train"):
        model.predict(np.zeros((5, 20)))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        MKL(grams).predict([g[:5] for g in grams])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PSD input: no warning at all
        MKL(grams, solver=kelley(eps=1e-3)).fit(None, y)


def test_max_iter_warns_once_with_the_certified_gap():
    from cutplane.exceptions import ConvergenceWarning

    grams, y = _problem(n=30)
    with pytest.warns(ConvergenceWarning) as rec:
        model = MKL(grams, C=1.0, solver=kelley(eps=1e-9, max_iter=2)).fit(None, y)
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
    kernels = [LinearKernel(), GaussianKernel(0.3), PolynomialKernel(2, coef0=0.5, normalize=True), B1SplineKernel(3.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotPSDWarning)
        model = MKL(kernels, C=1.0, multiclass=multiclass, solver=kelley(eps=1e-3)).fit(X, labels)
    back = MKL.load(model.save(tmp_path / "mkl.npz"))
    assert [repr(k) for k in back.kernels] == [repr(k) for k in kernels]
    np.testing.assert_array_equal(back.predict(X_test), model.predict(X_test))
    np.testing.assert_array_equal(back.decision_function(X_test), model.decision_function(X_test))
    np.testing.assert_array_equal(back.kernel_weights_, model.kernel_weights_)
    assert back.get_params(deep=False).keys() == model.get_params(deep=False).keys()
    assert (back.objective_, back.gap_, back.n_iter_) == (model.objective_, model.gap_, model.n_iter_)
    # sparse samples keep their support vectors sparse
    sparse_model = MKL([LinearKernel(), GaussianKernel(0.3)], C=1.0, solver=kelley(eps=1e-3))
    sparse_model.fit(sp.csr_matrix(X), f > 0)
    again = MKL.load(sparse_model.save(tmp_path / "sparse.npz"))
    assert sp.issparse(again.support_vectors_)
    np.testing.assert_array_equal(again.predict(X_test), sparse_model.predict(X_test))


def test_save_load_precomputed_grams_and_wrappers(tmp_path):
    grams, y = _problem(n=40)
    rng = np.random.default_rng(0)
    test_grams = [G[rng.permutation(40)[:15]] for G in grams]  # rows of training points as "test" points
    for name, solver in (("kelley", kelley(eps=1e-3)), ("gs", Wrapper(method="gauss-seidel", eps=1e-3))):
        model = MKL(grams, C=1.0, solver=solver).fit(None, y)
        back = MKL.load(model.save(tmp_path / f"{name}.npz"))
        assert back.kernels is None  # precomputed Gram matrices are not saved
        flat = {k: v for k, v in model.get_params().items() if k not in ("kernels", "solver")}
        assert {k: v for k, v in back.get_params().items() if k not in ("kernels", "solver")} == flat
        assert type(back.solver) is type(solver)
        np.testing.assert_array_equal(back.decision_function(test_grams), model.decision_function(test_grams))
        np.testing.assert_array_equal(back.predict(grams), model.predict(grams))
        with pytest.raises(InputError, match="refit"):
            back.fit(None, y)
    default = MKL(grams, C=1.0).fit(None, y)
    assert MKL.load(default.save(tmp_path / "default.npz")).solver is None


def test_model_files_of_the_former_estimators_load(tmp_path):
    """Files written by KelleyMKL / GaussSeidelMKL / SimpleMKL (cutplane 0.x before MKL, model format
    version 1; tests/fixtures/mkl_legacy_*.npz) load as MKL with the equivalent solver and predict
    as they did (their decision values are stored in the files)."""
    from pathlib import Path

    from problems.model_io import load_model, save_model

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    rng = np.random.default_rng(7)
    X, X_test = rng.standard_normal((30, 3)), rng.standard_normal((8, 3))
    back = MKL.load(fixtures / "mkl_legacy_kelley.npz")
    assert isinstance(back.solver, CuttingPlane)
    assert back.get_params()["solver__method"] == "kelley" and back.get_params()["solver__max_iter"] == 150
    assert [type(k).__name__ for k in back.kernels] == ["LinearKernel", "GaussianKernel", "PolynomialKernel"]
    _, meta = load_model(fixtures / "mkl_legacy_kelley.npz")
    np.testing.assert_array_equal(back.decision_function(X_test), np.asarray(meta["expected_decision"]))
    grams_test = [LinearKernel()(X_test, X), GaussianKernel(0.3)(X_test, X)]
    for name, method in (("gauss_seidel", "gauss-seidel"), ("simplemkl", "simplemkl")):
        back = MKL.load(fixtures / f"mkl_legacy_{name}.npz")
        assert isinstance(back.solver, Wrapper) and back.solver.method == method
        assert back.solver.time_limit == 60.0 and back.C == 2.0
        _, meta = load_model(fixtures / f"mkl_legacy_{name}.npz")
        np.testing.assert_array_equal(back.decision_function(grams_test), np.asarray(meta["expected_decision"]))
    # a model file of another estimator is refused, naming what it holds and what is read
    arrays, meta = load_model(fixtures / "mkl_legacy_kelley.npz")
    meta = {k: v for k, v in meta.items() if k not in ("format", "format_version", "arrays")}
    with pytest.raises(ModelFormatError, match="format version 1"):
        MKL.load(save_model(tmp_path / "other.npz", arrays, dict(meta, estimator="RandomMKL")))
    with pytest.raises(ModelFormatError, match="dual_coef"):
        MKL.load(save_model(tmp_path / "no_dual.npz", {k: v for k, v in arrays.items() if k != "dual_coef"}, meta))
    with pytest.raises(ModelFormatError, match="solver"):
        MKL.load(
            save_model(
                tmp_path / "bad_solver.npz",
                arrays,
                dict(meta, estimator="MKL", params={"C": 1.0}, solver={"name": "os.system", "params": {}}),
            )
        )


def test_save_rejects_foreign_callables_and_load_rejects_bad_files(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    model = MKL([LinearKernel(), lambda A, B=None: A @ (A if B is None else B).T], C=1.0, solver=kelley(eps=1e-3)).fit(
        X, y
    )
    with pytest.raises(InputError) as err:
        model.save(tmp_path / "m.npz")
    assert err.value.field == "kernels"
    good = MKL([LinearKernel(), GaussianKernel(0.5)], C=1.0, solver=kelley(eps=1e-3)).fit(X, y)
    path = good.save(tmp_path / "good.npz")
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError):
        MKL.load(tmp_path / "cut.npz")
    from problems.model_io import load_model, save_model

    arrays, meta = load_model(path)
    meta = {k: v for k, v in meta.items() if k not in ("format", "format_version", "arrays")}
    bad = dict(meta, kernels=[{"name": "os.system", "params": {}}, meta["kernels"][1]])
    with pytest.raises(ModelFormatError):
        MKL.load(save_model(tmp_path / "bad_kernel.npz", arrays, bad))
    with pytest.raises(ModelFormatError):
        MKL.load(save_model(tmp_path / "bad_support.npz", dict(arrays, support=arrays["support"] + 1000), meta))
    with pytest.raises(ModelFormatError):
        MKL.load(save_model(tmp_path / "no_sv.npz", {k: v for k, v in arrays.items() if k != "support_vectors"}, meta))


# ------------------------------------------------------------------------ the solver object
def test_constructor_has_at_most_ten_parameters_and_solver_options_are_nested():
    import inspect

    assert len(inspect.signature(MKL.__init__).parameters) - 1 <= 10
    params = MKL([np.eye(3)], solver=kelley(eps=1e-4)).get_params()
    assert {"solver__eps", "solver__max_iter", "solver__time_limit", "solver__backend", "solver__method"} <= set(params)
    assert params["solver__eps"] == 1e-4
    params = MKL([np.eye(3)], solver=Wrapper(method="simplemkl")).get_params()
    assert {"solver__eps", "solver__max_iter", "solver__time_limit", "solver__method"} <= set(params)
    est = MKL([np.eye(3)], solver=kelley()).set_params(solver__time_limit=5.0, solver__eps=1e-5)
    assert (est.solver.time_limit, est.solver.eps) == (5.0, 1e-5)


def test_clone_and_grid_search_over_solver_eps():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1, -1)
    est = MKL([LinearKernel(), GaussianKernel(0.5)], C=1.0, solver=kelley(eps=1e-2))
    copy = clone(est)
    assert copy.solver is not est.solver and copy.get_params()["solver__eps"] == 1e-2
    for solver in (kelley(), Wrapper(method="gauss-seidel")):
        search = GridSearchCV(
            MKL([LinearKernel(), GaussianKernel(0.5)], C=1.0, solver=solver),
            param_grid={"solver__eps": [1e-1, 1e-3]},
            cv=2,
        ).fit(X, y)
        assert search.best_params_["solver__eps"] in (1e-1, 1e-3)
        assert search.best_estimator_.gap_ <= search.best_params_["solver__eps"]
        assert search.best_estimator_.solver.eps == search.best_params_["solver__eps"]


def test_solver_checks_at_fit():
    grams, y = _problem(n=20)
    with pytest.raises(InputError) as err:
        MKL(grams, solver=CuttingPlane()).fit(None, y)  # method="bmrm": not for the simplex
    assert err.value.field == "solver__method"
    with pytest.raises(InputError) as err:
        MKL(grams, solver=kelley(executor="threads")).fit(None, y)
    assert err.value.field == "solver__executor"
    with pytest.raises(InputError) as err:
        MKL(grams, solver=kelley(eps=-1.0)).fit(None, y)
    assert err.value.field == "eps"
    with pytest.raises(InputError) as err:
        MKL(grams, solver=Wrapper(method="newton")).fit(None, y)
    assert err.value.field == "method"
    with pytest.raises(InputError) as err:
        MKL(grams, solver="kelley").fit(None, y)
    assert err.value.field == "solver"
    with pytest.raises(InputError) as err:
        MKL(grams, gap_tol=0.0).fit(None, y)
    assert err.value.field == "gap_tol"


def test_removed_estimator_names_say_what_replaces_them():
    import problems.mkl

    with pytest.raises(AttributeError, match='Wrapper\\(method="simplemkl"'):
        _ = problems.mkl.SimpleMKL


# ------------------------------------------------------- MKLpy's convention: the Gram matrices as X
def _train_test_grams(seed, n=30, n_test=9):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n + n_test, 3))
    y = np.where(Z[:n, 0] - Z[:n, 1] ** 2 + 0.5 + 0.3 * rng.standard_normal(n) > 0, "pos", "neg")
    kernels = [LinearKernel(), GaussianKernel(0.4), PolynomialKernel(2, normalize=True)]
    X, X_test = Z[:n], Z[n:]
    return [k(X) for k in kernels], [k(X_test, X) for k in kernels], y, X, X_test, kernels


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**16), as_array=st.booleans(), solver=st.sampled_from(["kelley", "simplemkl"]))
def test_precomputed_kernels_take_the_gram_matrices_as_X(seed, as_array, solver):
    """``MKL(kernels="precomputed").fit(KL, y)`` / ``predict(KL_test)`` (a list, or an array of shape
    (n_kernels, n, n)) is the model of the Gram matrices given as ``kernels`` and of the kernel
    functions on the samples."""
    train, test, y, X, X_test, kernels = _train_test_grams(seed)
    make = (lambda: kelley(eps=1e-4)) if solver == "kelley" else (lambda: Wrapper(method="simplemkl", eps=1e-4))
    KL, KL_test = (np.stack(train), np.stack(test)) if as_array else (train, test)
    model = MKL("precomputed", solver=make()).fit(KL, y)
    legacy = MKL(train, solver=make()).fit(None, y)
    samples = MKL(kernels, solver=make()).fit(X, y)
    for other, other_test in ((legacy, test), (samples, X_test)):
        np.testing.assert_allclose(model.kernel_weights_, other.kernel_weights_, atol=1e-9)
        np.testing.assert_allclose(model.decision_function(KL_test), other.decision_function(other_test), atol=1e-8)
        np.testing.assert_array_equal(model.predict(KL_test), other.predict(other_test))
    assert model.support_vectors_ is None and not hasattr(model, "n_features_in_")
    assert model.score(KL, y) == legacy.score(train, y)
    # the Gram matrices are data, not a hyper-parameter: the estimator keeps only the string
    assert model.get_params()["kernels"] == "precomputed" and clone_params(model) == model.get_params()


def clone_params(est):
    from sklearn.base import clone

    return clone(est).get_params()


def test_precomputed_kernels_refuse_what_is_not_a_list_of_gram_matrices():
    train, test, y, X, _, _ = _train_test_grams(0)
    with pytest.raises(InputError, match="pass the training Gram matrices as X") as err:
        MKL("precomputed").fit(None, y)
    assert err.value.field == "X"
    with pytest.raises(InputError, match="got a ndarray of shape \\(30, 3\\): pass the list"):
        MKL("precomputed").fit(X, y)  # samples, not Gram matrices
    with pytest.raises(InputError, match="got a ndarray of shape \\(30, 30\\)"):
        MKL("precomputed").fit(train[0], y)  # one matrix, not a list of them
    with pytest.raises(InputError, match="must be square") as err:
        MKL("precomputed").fit([K[:, :20] for K in train], y)
    assert err.value.field == "X"
    with pytest.raises(InputError, match="same samples"):
        MKL("precomputed").fit([train[0], train[1][:20, :20]], y)
    with pytest.raises(InputError, match="but y has 20 labels"):
        MKL("precomputed").fit(train, y[:20])
    with pytest.raises(InputError, match="'precomputed', got 'precomputd'"):
        MKL("precomputd").fit(train, y)
    model = MKL("precomputed", solver=kelley(eps=1e-3)).fit(train, y)
    with pytest.raises(InputError, match="expected 3 test Gram matrices, got 2"):
        model.predict(test[:2])
    with pytest.raises(InputError, match="test Gram matrix 1 has shape"):
        model.predict([test[0], test[1][:, :10], test[2]])
    with pytest.raises(InputError, match="list of test-vs-train"):
        model.predict(test[0])


def test_precomputed_model_files_keep_the_convention(tmp_path):
    train, test, y, *_ = _train_test_grams(1)
    model = MKL("precomputed", C=2.0, solver=Wrapper(method="gauss-seidel", eps=1e-4)).fit(train, y)
    back = MKL.load(model.save(tmp_path / "pre.npz"))
    assert back.kernels == "precomputed" and back.get_params() == model.get_params()
    np.testing.assert_array_equal(back.decision_function(np.stack(test)), model.decision_function(test))
    refitted = back.fit(train, y)  # no Gram matrix was saved, none is needed to refit
    np.testing.assert_array_equal(refitted.predict(test), model.predict(test))


# ------------------------------------------------------------------------------ standard output
_FIT_SCRIPT = """
import numpy as np
from problems import MKL
from problems.mkl.kernels import GaussianKernel, LinearKernel
from problems.solvers import CuttingPlane
rng = np.random.default_rng(0)
X = rng.standard_normal((30, 3))
y = np.where(X[:, 0] > 0, 1, -1)
MKL([LinearKernel(), GaussianKernel(0.5)], solver=CuttingPlane(method="kelley", eps=1e-3)).fit(X, y)
"""


def test_fitting_prints_nothing_on_standard_output(capfd):
    """HiGHS printed its banner on file descriptor 1 when the LP backends were probed; a fresh
    interpreter (the banner comes once per process) shares this test's captured descriptors."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FIT_SCRIPT], timeout=300)
    assert done.returncode == 0
    assert capfd.readouterr().out == ""
    grams, y = _problem(n=20)
    MKL(grams, solver=kelley(eps=1e-3)).fit(None, y)  # and in this process
    assert capfd.readouterr().out == ""


def test_refit_on_gram_matrices_forgets_the_number_of_features():
    train, test, y, X, X_test, kernels = _train_test_grams(2)
    model = MKL(kernels, solver=kelley(eps=1e-3)).fit(X, y)
    assert model.n_features_in_ == 3
    model.set_params(kernels="precomputed").fit(train, y)
    assert not hasattr(model, "n_features_in_") and model.support_vectors_ is None
    np.testing.assert_array_equal(model.predict(test), MKL(kernels, solver=kelley(eps=1e-3)).fit(X, y).predict(X_test))
