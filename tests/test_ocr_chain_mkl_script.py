"""examples/ocr_chain_mkl.py: its two solvers minimise the same objective, checked against a direct
cvxpy solve with the chain loss written by brute force over all labelings, and a tiny run on the
OCR words (C chosen by validation, certificates, page)."""
import importlib.util
import itertools
import re
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "ocr_chain_mkl.py"


@pytest.fixture(scope="module")
def mod():
    spec = importlib.util.spec_from_file_location("ocr_chain_mkl", SCRIPT)
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m  # its dataclasses resolve their annotations through sys.modules
    try:
        spec.loader.exec_module(m)
        yield m
    finally:
        sys.modules.pop(spec.name, None)


def _tiny_chain(seed):
    """5 sequences of 2-3 tokens, 3 labels, 4 features in 2 blocks (+ transitions)."""
    from oracles.dense_sequence import DenseSequenceOracle

    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 4, size=5)
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    X = rng.normal(size=(ptr[-1], 4))
    y = rng.integers(0, 3, size=ptr[-1])
    return DenseSequenceOracle(X, y, ptr, 3, feature_groups=np.array([0, 0, 1, 1])), X, y, ptr


def _brute_force_pieces(oracle, X, y, ptr):
    """Per sequence, rows (hamming(y', y), Phi(y') - Phi(y)) over all labelings y'."""
    def phi(xs, labels):
        v = np.zeros(oracle.dim)
        W, T = oracle.split_weights(v)  # views into v: the oracle's own layout
        for t, lab in enumerate(labels):
            W[:, lab] += xs[t]
            if t:
                T[labels[t - 1], lab] += 1.0
        return v

    out = []
    for i in range(len(ptr) - 1):
        xs, gold = X[ptr[i]:ptr[i + 1]], y[ptr[i]:ptr[i + 1]]
        labs = list(itertools.product(range(3), repeat=len(gold)))
        H = np.array([np.sum(np.array(lab) != gold) for lab in labs], dtype=float)
        D = np.array([phi(xs, lab) - phi(xs, gold) for lab in labs])
        out.append((H, D))
    return out


@pytest.mark.parametrize("p", [2.0, 1.0])
def test_fit_against_cvxpy(mod, p):
    import cvxpy as cp

    oracle, X, y, ptr = _tiny_chain(3)
    pieces = _brute_force_pieces(oracle, X, y, ptr)
    w_rand = np.random.default_rng(0).normal(size=oracle.dim)
    brute = np.mean([np.max(H + D @ w_rand) for H, D in pieces])
    assert np.isclose(float(oracle(w_rand).value), brute)  # the brute-force loss is the oracle's

    C = 5.0
    w = cp.Variable(oracle.dim)
    if p == 2.0:
        omega = 0.5 * cp.sum_squares(w)
    else:
        omega = 0.5 * cp.square(sum(cp.norm(w[np.flatnonzero(oracle.groups == g)]) for g in range(oracle.n_groups)))
    risk = sum(cp.max(H + D @ w) for H, D in pieces) / len(pieces)
    opt = cp.Problem(cp.Minimize(omega / C + risk)).solve(solver=cp.CLARABEL)

    args = mod.parse_args(["--mtl-rel-eps", "1e-5", "--mtl-time-limit", "20", "--epochs", "30",
                           "--eta-grid", "0.1", "1", "--tune-epochs", "2", "--tune-words", "0"])
    mtl = mod.fit("mtl", oracle, p, C, args)
    assert mtl.lower_bound - 1e-6 <= opt <= mtl.objective + 1e-6
    assert mtl.objective - mtl.lower_bound <= 1e-5 * float(oracle(np.zeros(oracle.dim)).value) + 1e-12
    spoms = [mod.fit(k, oracle, p, C, args) for k in ("spom-last", "spom-averaged")]
    assert not np.allclose(spoms[0].w, spoms[1].w)  # the last iterate and the average differ
    for spom in spoms:
        assert spom.lower_bound is None and spom.objective >= opt - 1e-6  # the same objective, not below its min
    for f in [mtl] + spoms:  # the reported objective is F at the returned w
        om = 0.5 * float(f.w @ f.w) if p == 2.0 else 0.5 * sum(
            np.linalg.norm(f.w[oracle.groups == g]) for g in range(oracle.n_groups)) ** 2
        assert np.isclose(f.objective, om / C + float(oracle(f.w).value), rtol=1e-9, atol=1e-12)


def test_paired_difference(mod):
    a = np.array([1, 1, 0, 1, 0, 1], dtype=bool)
    b = np.array([1, 0, 0, 1, 1, 0], dtype=bool)
    d, se = mod.paired_difference(a, b)
    diffs = a.astype(float) - b
    assert np.isclose(d, a.mean() - b.mean())
    assert np.isclose(se, np.sqrt(np.sum((diffs - diffs.mean()) ** 2) / (diffs.size - 1) / diffs.size))


def test_tiny_run_on_ocr(data_dir, mod, tmp_path):
    out = tmp_path / "ocr.md"
    rows = mod.main(["--n-train-words", "15", "--n-val-words", "10", "--n-test-words", "15", "--n-components", "10",
                     "--kernels", "L", "MKL", "--C", "10", "100", "--epochs", "2", "--eta-grid", "1", "3",
                     "--tune-epochs", "1", "--mtl-rel-eps", "0.01", "--mtl-time-limit", "5", "--out", str(out)])
    runs = ["mtl", "spom-last", "spom-averaged"]
    assert [(r.key, r.solver) for r in rows] == [(k, s) for k in ("L", "MKL") for s in runs]
    by = {(r.key, r.solver): r for r in rows}
    for r in rows:
        assert [f.C for f in r.grid] == [10.0, 100.0]
        assert r.best.val == max(f.val for f in r.grid)  # chosen by validation
        assert r.test == pytest.approx(np.mean(r.correct))
    for key, sk in itertools.product(("L", "MKL"), runs[1:]):
        for fm, fs in zip(by[key, "mtl"].grid, by[key, sk].grid):
            assert fm.lower_bound <= fm.objective + 1e-12
            assert fs.objective >= fm.lower_bound - 1e-9  # SPOM cannot go below the certified bound
    beta = by["MKL", "mtl"].beta
    assert beta.shape == (4,) and np.isclose(beta.sum(), 1.0)  # L, Q, G and the transitions
    text = out.read_text()
    n_chars = int(re.search(r"Test: \*\*15 words \((\d+) characters\)", text).group(1))
    assert all(r.correct.size == n_chars for r in rows)
    assert "15 words" in text and "one fold only" in text and "examples/ocr_chain_mkl.py" in text
    assert "Optimisation error of SPOM" in text and "SPOM (averaged model)" in text and "## Findings" in text
