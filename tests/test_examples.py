"""The teaching examples and the "write your own risk" tutorial: tiny runs, PNGs, certificates.

The examples are scripts, not a package (as scikit-learn's): each is run from ``examples/`` with
:func:`runpy.run_path` and called through its ``main`` with a small setting in a temporary folder;
the numbers it returns are checked against their certificates (``lower <= upper`` at every
iteration, ``gap <= eps`` at exit) and against brute force or a direct cvxpy solve of the same
problem. :func:`test_every_example_runs_as_written` runs each script with the command its
docstring gives, in a subprocess, within the minute an example may take.
"""

import os
import re
import runpy
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PNG = b"\x89PNG\r\n\x1a\n"
#: The most an example may take on the project's machine (two shared cores).
BUDGET_S = 60.0


def _load(name):
    """The script's globals after running it as a module that is not ``__main__``."""
    return SimpleNamespace(**runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name=f"example_{name}"))


def _documented_command(script):
    """The first ``python examples/<script> ...`` command of the script's docstring, as an argv."""
    doc = script.read_text(encoding="utf-8").split('"""')[1]
    doc = re.sub(r"\\\\?\n\s*", " ", doc)  # join continued lines
    m = re.search(rf"python (examples/{re.escape(script.name)}[^`\n]*)", doc)
    assert m, f"{script.name}: its docstring names no `python examples/{script.name} ...` command"
    return re.sub(r"\[[^]]*\]", "", m.group(1)).split()  # optional [--flags] are left out


def test_every_example_has_a_test_and_a_command():
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert scripts == sorted(AS_WRITTEN)
    for name in scripts:
        _documented_command(EXAMPLES / name)


#: Each example with the OUT folder of its documented command (None: the command writes nothing).
AS_WRITTEN = {
    "teach_kelley_1d.py": "OUT",
    "teach_bmrm_vs_lsbmrm.py": "OUT",
    "teach_mtl_group_weights.py": "OUT",
    "teach_spom_group_weights.py": "OUT",
    "write_your_own_risk.py": None,
    "map_grid_tightening.py": "out",
    "compare_batch_online.py": "runs/compare",
    "structured_multilabel.py": "OUT",
    "structured_hierarchy.py": "OUT",
    "structured_ocr_chain.py": "OUT",
    "structured_grid.py": "OUT",
    "your_structured_model.py": None,
}


#: Examples that read a dataset (CUTPLANE_DATA): their runs are marked ``data`` (skipped, with the
#: reason, where the datasets are absent).
NEEDS_DATA = {"structured_ocr_chain.py"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.data) if n in NEEDS_DATA else n for n in sorted(AS_WRITTEN)]
)
def test_every_example_runs_as_written(name, tmp_path):
    """The docstring's command, from the repository root, with OUT in a temporary folder."""
    argv = [str(tmp_path / "out") if a == AS_WRITTEN[name] else a for a in _documented_command(EXAMPLES / name)]
    env = dict(os.environ, MPLBACKEND="Agg")
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=3 * BUDGET_S
    )
    elapsed = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr[-2000:]
    assert elapsed <= BUDGET_S * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)), elapsed


def _check_bounds(upper, lower, gap, eps):
    upper, lower = np.asarray(upper), np.asarray(lower)
    finite = np.isfinite(lower)
    assert np.all(lower[finite] <= upper[finite] + 1e-9 * (1 + np.abs(upper[finite])))
    assert np.all(np.diff(lower[finite]) >= -1e-12 * (1 + np.abs(lower[finite][1:])))  # never decreases
    assert np.all(np.diff(upper) <= 1e-12 * (1 + np.abs(upper[1:])))  # best upper bound never increases
    assert 0 <= gap <= eps


def _model_minimum(points, values, slopes, lo, hi):
    """Exact minimum over [lo, hi] of max_i values_i + slopes_i (x - points_i): at an end or a crossing."""
    cands = [lo, hi]
    for a in range(len(points)):
        for b in range(a + 1, len(points)):
            if slopes[a] != slopes[b]:
                x = (values[b] - slopes[b] * points[b] - values[a] + slopes[a] * points[a]) / (slopes[a] - slopes[b])
                if lo <= x <= hi:
                    cands.append(x)
    cands = np.array(cands)
    return np.min(np.max(values[:, None] + slopes[:, None] * (cands[None, :] - points[:, None]), axis=0))


def test_kelley_1d(tmp_path):
    mod = _load("teach_kelley_1d")
    r = mod.main(["--out", str(tmp_path), "--eps", "1e-6"])
    assert (tmp_path / "kelley_1d.png").read_bytes()[:8] == PNG
    res = r.result
    assert res.status == "converged"
    _check_bounds(r.upper, r.lower, res.gap, 1e-6)
    xs = np.linspace(mod.LO, mod.HI, 200001)
    f_star = mod.f(xs).min()  # brute force on a fine grid (smooth minimum: grid error ~ h^2 f"/8 < 1e-9)
    assert res.lower_bound - 1e-9 <= f_star <= res.objective + 1e-8
    assert abs(res.w[0] - xs[np.argmin(mod.f(xs))]) < 1e-2
    assert len(r.points) == res.n_iter and r.points[0] == mod.X0
    for t in range(1, res.n_iter + 1):
        f_t = mod.model(r, t, xs)
        assert np.all(f_t <= mod.f(xs) + 1e-12)  # the model under-estimates f
        # ... and touches it at the points visited
        np.testing.assert_allclose(mod.model(r, t, r.points[:t]), r.values[:t], rtol=1e-12, atol=1e-12)
        # the engine's lower bound after t cuts is min over X of the model f_t (its LP), by brute force
        exact = _model_minimum(r.points[:t], r.values[:t], r.slopes[:t], mod.LO, mod.HI)
        assert r.lower[t - 1] == pytest.approx(min(exact, r.upper[t - 1]), abs=1e-7)
        if t < res.n_iter:  # the next query point minimises f_t
            assert mod.model(r, t, [r.points[t]])[0] == pytest.approx(exact, abs=1e-7)


def test_bmrm_vs_lsbmrm_against_cvxpy(tmp_path):
    import cvxpy as cp

    from problems.demo_data import make_binary

    mod = _load("teach_bmrm_vs_lsbmrm")
    C, eps = 100.0, 1e-3
    runs = mod.main(
        ["--out", str(tmp_path), "--n-samples", "300", "--n-features", "10", "--C", str(C), "--eps", str(eps)]
    )
    assert (tmp_path / "bmrm_vs_lsbmrm.png").read_bytes()[:8] == PNG
    data = make_binary(300, 10, noise=0.5, n_test=0, seed=0)
    X, y = np.asarray(data.X_train), data.y_train
    w = cp.Variable(10)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(cp.pos(1 - cp.multiply(y, X @ w))) / len(y)))
    prob.solve(solver="CLARABEL")
    assert set(runs) == {"bmrm", "ls-bmrm"}
    for r in runs.values():
        assert r.status == "converged" and r.n_iter == len(r.upper)
        _check_bounds(r.upper, r.lower, r.gap, eps)
        assert r.lower_bound - 1e-6 <= prob.value <= r.objective + 1e-6


def test_mtl_group_weights(tmp_path):
    mod = _load("teach_mtl_group_weights")
    trace = mod.main(["--out", str(tmp_path), "--n-train", "80"])
    assert (tmp_path / "mtl_group_weights.png").read_bytes()[:8] == PNG
    assert trace.status == "converged"
    _check_bounds(trace.upper, trace.lower, trace.gap, trace.eps)
    assert trace.mu.shape == (len(trace.reduced_index), len(trace.names))
    assert np.all(trace.mu >= -1e-9) and np.allclose(trace.mu.sum(axis=1), 1.0, atol=1e-6)  # simplex
    assert np.all(np.diff(trace.reduced_index) > 0) and trace.reduced_index[-1] == len(trace.upper)
    noise = [trace.names.index(t) for t in trace.noise]
    assert np.all(trace.mu[-1, noise] <= 1e-6)  # the noise templates end switched off
    assert trace.mu[-1, [trace.names.index("U00"), trace.names.index("U01")]].min() > 0.1


def test_spom_group_weights(tmp_path):
    mod = _load("teach_spom_group_weights")
    trace = mod.main(["--out", str(tmp_path), "--n-train", "80", "--epochs", "4"])
    assert (tmp_path / "spom_group_weights.png").read_bytes()[:8] == PNG
    assert list(trace.epochs) == [1.0, 2.0, 3.0, 4.0]
    assert np.all(trace.beta >= 0) and np.allclose(trace.beta.sum(axis=1), 1.0)
    # the callback saw the model SPOM returns (last iterate): its weights are SPOM's kernel weights
    np.testing.assert_allclose(trace.beta[-1], trace.final_beta, rtol=1e-9, atol=1e-12)
    # MTL^struct certifies a lower bound on the same F: SPOM's objective cannot be below it
    assert 0 <= trace.mtl_gap <= trace.eps
    assert np.all(trace.objective >= trace.mtl_lower_bound - 1e-9)


@pytest.fixture(scope="module")
def risk_module():
    return _load("write_your_own_risk")


def test_write_your_own_risk_against_cvxpy(risk_module, capsys):
    import cvxpy as cp

    mod = risk_module
    lam, epsilon, eps = 0.01, 0.1, 1e-6
    results = mod.main(["--n-samples", "120", "--n-features", "6", "--lam", str(lam), "--eps", str(eps)])
    out = capsys.readouterr().out
    assert "pairwise-ranking" in out and "epsilon-insensitive" in out
    X, y, _ = mod.make_data(120, 6, seed=0)
    w = cp.Variable(6)
    svr = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(w) + cp.sum(cp.pos(cp.abs(X @ w - y) - epsilon)) / len(y)))
    svr.solve(solver="CLARABEL")
    Xr, yr = X[:60], y[:60]
    i, j = np.nonzero(yr[:, None] > yr[None, :])
    D = Xr[i] - Xr[j]
    rank = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(w) + cp.sum(cp.pos(1 - D @ w)) / len(i)))
    rank.solve(solver="CLARABEL")
    expected = {"epsilon-insensitive": svr.value, "pairwise-ranking": rank.value}
    assert len(results) == 4
    for (risk, method), r in results.items():
        assert r.status == "converged" and 0 <= r.gap <= eps
        _check_bounds(r.history.best_upper, r.history.lower, r.gap, eps)
        assert r.lower_bound - 1e-6 <= expected[risk] <= r.objective + 1e-6, (risk, method)
        assert f"{r.gap:9.2e}" in out


@settings(max_examples=30)
@given(seed=st.integers(0, 2**31 - 1))
def test_tutorial_oracles_give_valid_cuts(risk_module, seed):
    """Each cut is a minorant: R(v) >= R(w) + <a, v - w> for random w, v (convexity + subgradient)."""
    mod = risk_module
    rng = np.random.default_rng(seed)
    X, y, _ = mod.make_data(40, 4, seed=seed % 1000)
    for oracle in (mod.epsilon_insensitive_risk(X, y, 0.2), mod.PairwiseRankingRisk(X, y)):
        w, v = rng.standard_normal(4), rng.standard_normal(4)
        at_w, at_v = oracle(w), oracle(v)
        assert at_w.cut.offset + at_w.cut.slope @ w == pytest.approx(at_w.value, abs=1e-10)
        assert at_v.value >= at_w.cut.offset + at_w.cut.slope @ v - 1e-10


def test_ranking_risk_needs_pairs(risk_module):
    from cutplane.exceptions import InputError

    with pytest.raises(InputError, match="no pair"):
        risk_module.PairwiseRankingRisk(np.ones((3, 2)), np.zeros(3))


# ------------------------------------------------- your own structured model (issue 37)
def _certified(res):
    """A finished run of the engine: converged, bounds in order, gap within the tolerance."""
    assert res.status == "converged"
    _check_bounds(res.history.best_upper, res.history.lower, res.gap, res.eps)


def test_structured_multilabel(tmp_path, capsys):
    mod = _load("structured_multilabel")
    runs = mod.main(["--out", str(tmp_path), "--n-few", "4", "--n-many", "7", "--n-train", "80", "--n-test", "200"])
    assert (tmp_path / "structured_multilabel.png").read_bytes()[:8] == PNG
    out = capsys.readouterr().out
    assert len(runs) == 4 and "all pairs (enumeration)" in out and "Chow-Liu tree (max-product)" in out
    for r in runs.values():
        _certified(r["svm"].result_)
        assert 0.0 <= r["hamming"] <= r["exact_match"] <= 1.0
    tree = next(r["edges"] for name, r in runs.items() if "tree" in name)
    assert len(tree) == 6  # a spanning tree of the 7 labels


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_multilabel_max_product_is_exact(seed):
    """The tree model's max-product argmax (plain and loss-augmented) attains the enumerated maximum."""
    mod = _load("structured_multilabel")
    rng = np.random.default_rng(seed)
    L, d = 6, 4
    parents = [int(rng.integers(j)) for j in range(1, L)]
    edges = [(p, j + 1) for j, p in enumerate(parents)]
    tree, enum = mod.TreeMultiLabel(d, L, edges), mod.EnumeratedMultiLabel(d, L, edges)
    w, x, y = rng.standard_normal(tree.dim), rng.standard_normal(d), rng.integers(0, 2, L)
    for got, best in ((tree.argmax(x, w), enum.argmax(x, w)), (tree.loss_augmented_argmax(x, y, w), None)):
        if best is None:
            best = enum.loss_augmented_argmax(x, y, w)
            score = lambda z: enum.loss(y, z) + w @ enum.joint_feature(x, z)  # noqa: E731
        else:
            score = lambda z: w @ enum.joint_feature(x, z)  # noqa: E731
        assert score(got) == pytest.approx(score(best), abs=1e-9)


def test_structured_hierarchy(tmp_path, capsys):
    mod = _load("structured_hierarchy")
    Cs = [1.0, 10.0]
    runs = mod.main(
        ["--out", str(tmp_path), "--n-train", "90", "--n-val", "90", "--n-test", "300", "--Cs", *map(str, Cs)]
    )
    assert (tmp_path / "structured_hierarchy.png").read_bytes()[:8] == PNG
    assert "path features, tree loss" in capsys.readouterr().out
    for r in runs.values():
        _certified(r["svm"].result_)
        path = r["svm"].path_["C"]  # the grid, then the points the path added past its edge (if any)
        assert path[: len(Cs)] == Cs and r["C"] in path and 0.0 <= r["error"] <= 1.0
    model = runs["path features, tree loss"]["model"]
    D = model.distance
    assert len(model.leaves) == 18 and np.all(np.diag(D) == 0) and np.array_equal(D, D.T)
    assert D[0, 1] == 2 and D.max() == 6  # siblings; leaves under different children of the root
    x, w = np.ones(model.n_features), np.random.default_rng(0).standard_normal(model.dim)
    scores = [w @ model.joint_feature(x, leaf) for leaf in range(len(model.leaves))]
    assert model.argmax(x, w) == int(np.argmax(scores))


@pytest.mark.data
def test_structured_ocr_chain(tmp_path, capsys):
    mod = _load("structured_ocr_chain")
    rng = np.random.default_rng(0)
    for T in (1, 2, 7):  # the numba Viterbi is the Python one
        scores, trans = rng.standard_normal((T, 26)), rng.standard_normal((26, 26))
        assert np.array_equal(mod.viterbi_numba(scores, trans), mod.ChainModel.viterbi(scores, trans))
    runs = mod.main(["--out", str(tmp_path), "--n-train", "40", "--n-test", "40"])
    assert (tmp_path / "structured_ocr_chain.png").read_bytes()[:8] == PNG
    out = capsys.readouterr().out
    assert "python Viterbi" in out and "numba  Viterbi" in out and "argmax alone" in out
    py, nb = runs["python"]["svm"].result_, runs["numba"]["svm"].result_
    for res in (py, nb):
        _certified(res)
    assert nb.objective == pytest.approx(py.objective, rel=1e-9)  # the same model, the same iterates
    assert runs["python"]["accuracy"] == runs["numba"]["accuracy"] > 1.0 / 26


def test_structured_grid(tmp_path, capsys):
    from oracles.mapinference import labelling_value

    mod = _load("structured_grid")
    runs = mod.main(["--out", str(tmp_path), "--n-train", "4", "--n-test", "4", "--eps", "0.5"])
    assert (tmp_path / "structured_grid.png").read_bytes()[:8] == PNG
    assert "exact certificate False" in capsys.readouterr().out
    indep, grid = runs["independent pixels"], runs["grid (max-sum diffusion)"]
    assert indep["svm"].result_.exact and not grid["svm"].result_.exact  # the declared approximation
    assert not indep["model"].approximate and grid["model"].approximate
    assert 0 < grid["tight"][0] <= grid["tight"][1] <= grid["model"].n_calls  # training, then predict
    # <w, Phi(x, y)> is the MAP objective max-sum diffusion maximises
    model, rng = grid["model"], np.random.default_rng(1)
    X, Y = mod.make_images(1, seed=3)
    w = rng.standard_normal(model.dim)
    K, nu = model.n_levels, model.n_levels * model.n_pixel_features
    unary = model.features(X[0]) @ w[:nu].reshape(K, -1).T
    P = w[nu:].reshape(2, K, K)
    tables = np.where(model.horizontal[:, None, None], P[0], P[1])
    value = labelling_value(unary, tables, model.edges, Y[0].ravel())
    assert w @ model.joint_feature(X[0], Y[0]) == pytest.approx(value, abs=1e-9)


def test_your_structured_model(capsys):
    """The tutorial's model: every certified solver agrees within eps; SPOM is not below the bound."""
    mod = _load("your_structured_model")
    eps = 0.01
    fits = mod.main(["--n-samples", "120", "--eps", str(eps)])
    out = capsys.readouterr().out
    assert "n-slack" in out and "SPOM" in out and "MTL^struct feature weights" in out
    certified = [fits[name] for name in ("BMRM", "LS-BMRM", "n-slack", "BMRM, 2 threads")]
    best_lower = max(f.lower_bound_ for f in certified)
    for f in certified:
        assert f.result_.status == "converged" and 0 <= f.gap_ <= eps + 1e-9
        assert f.lower_bound_ <= min(g.objective_ for g in certified) + 1e-9
        assert f.objective_ - best_lower <= eps + 1e-9
    np.testing.assert_allclose(fits["BMRM, 2 threads"].coef_, fits["BMRM"].coef_)  # threads change nothing
    assert fits["SPOM (online)"].lower_bound_ is None and fits["SPOM (online)"].objective_ >= best_lower - 1e-9
    model, rng = fits["BMRM"].model, np.random.default_rng(0)
    X, y = mod.make_data(20, seed=1)
    w = rng.standard_normal(model.dim)
    for x, yy in zip(X, y):  # both argmax against enumeration of the classes
        scores = [w @ model.joint_feature(x, k) for k in range(model.n_classes)]
        assert model.argmax(x, w) == int(np.argmax(scores))
        aug = [model.loss(yy, k) + s for k, s in enumerate(scores)]
        assert model.loss_augmented_argmax(x, yy, w) == int(np.argmax(aug))
