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
}


@pytest.mark.parametrize("name", sorted(AS_WRITTEN))
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
