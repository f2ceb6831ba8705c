"""benchmarks/reproductions/ocr_chain_mkl.py: its two solvers minimise the same objective (L2, MKL, pMKL), checked
against a direct cvxpy solve with the chain loss written by brute force over all labelings; a tiny
run on two OCR folds, then ``--render`` of their JSON records: the merged page's means, standard
deviations and paired differences recomputed here from the per-fold rows."""

import itertools
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError

FOLDS = (0, 3)
TINY = [
    "--n-train-words",
    "12",
    "--n-val-words",
    "10",
    "--n-test-words",
    "15",
    "--n-components",
    "10",
    "--kernels",
    "L",
    "Q",
    "MKL",
    "pMKL",
    "--C",
    "10",
    "100",
    "--epochs",
    "2",
    "--eta-grid",
    "1",
    "3",
    "--model",
    "last",
    "--tune-epochs",
    "1",
    "--mtl-rel-eps",
    "0.02",
    "--mtl-time-limit",
    "1.5",
]


@pytest.fixture(scope="module")
def mod():
    from benchmarks.reproductions import ocr_chain_mkl

    return ocr_chain_mkl


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
        xs, gold = X[ptr[i] : ptr[i + 1]], y[ptr[i] : ptr[i + 1]]
        labs = list(itertools.product(range(3), repeat=len(gold)))
        H = np.array([np.sum(np.array(lab) != gold) for lab in labs], dtype=float)
        D = np.array([phi(xs, lab) - phi(xs, gold) for lab in labs])
        out.append((H, D))
    return out


def _omega(w, groups, n_groups, p):
    norms = np.array([np.linalg.norm(w[groups == g]) for g in range(n_groups)])
    return 0.5 * float(np.sum(norms**p)) ** (2.0 / p)


@pytest.mark.parametrize("p", [2.0, 1.0, 4.0 / 3.0])
def test_fit_against_cvxpy(mod, p):
    import cvxpy as cp

    oracle, X, y, ptr = _tiny_chain(3)
    pieces = _brute_force_pieces(oracle, X, y, ptr)
    w_rand = np.random.default_rng(0).normal(size=oracle.dim)
    brute = np.mean([np.max(H + D @ w_rand) for H, D in pieces])
    assert np.isclose(float(oracle(w_rand).value), brute)  # the brute-force loss is the oracle's

    C = 5.0
    w = cp.Variable(oracle.dim)
    norms = [cp.norm(w[np.flatnonzero(oracle.groups == g)]) for g in range(oracle.n_groups)]
    omega = 0.5 * cp.square(cp.pnorm(cp.hstack(norms), p))  # 1/2 (sum_j ||w_j||^p)^(2/p)
    risk = sum(cp.max(H + D @ w) for H, D in pieces) / len(pieces)
    opt = cp.Problem(cp.Minimize(omega / C + risk)).solve(solver=cp.CLARABEL)

    args = mod.parse_args(
        [
            "--mtl-rel-eps",
            "1e-5",
            "--mtl-time-limit",
            "20",
            "--epochs",
            "30",
            "--eta-grid",
            "0.1",
            "1",
            "--tune-epochs",
            "2",
            "--tune-words",
            "0",
        ]
    )
    mtl = mod.fit("mtl", oracle, p, C, args)
    assert mtl.lower_bound - 1e-6 <= opt <= mtl.objective + 1e-6
    assert mtl.objective - mtl.lower_bound <= 1e-5 * float(oracle(np.zeros(oracle.dim)).value) + 1e-12
    spoms = [mod.fit(k, oracle, p, C, args) for k in ("spom-last", "spom-averaged")]
    assert not np.allclose(spoms[0].w, spoms[1].w)  # the last iterate and the average differ
    for spom in spoms:
        assert spom.lower_bound is None and spom.objective >= opt - 1e-6  # the same objective, not below its min
    for f in [mtl] + spoms:  # the reported objective is F at the returned w
        om = _omega(f.w, oracle.groups, oracle.n_groups, p)
        assert np.isclose(f.objective, om / C + float(oracle(f.w).value), rtol=1e-9, atol=1e-12)


def test_paired_difference(mod):
    a = np.array([1, 1, 0, 1, 0, 1], dtype=bool)
    b = np.array([1, 0, 0, 1, 1, 0], dtype=bool)
    d, se = mod.paired_difference(a, b)
    diffs = a.astype(float) - b
    assert np.isclose(d, a.mean() - b.mean())
    assert np.isclose(se, np.sqrt(np.sum((diffs - diffs.mean()) ** 2) / (diffs.size - 1) / diffs.size))


@settings(max_examples=30)
@given(st.lists(st.booleans(), max_size=40))
def test_correctness_bits_round_trip(mod, bits):
    from benchmarks.reproductions._ocr_folds import pack_correct, unpack_correct

    packed = json.loads(json.dumps(pack_correct(bits)))
    assert unpack_correct(packed).tolist() == bits


def test_check_needs_render(mod, capsys):
    with pytest.raises(SystemExit):
        mod.parse_args(["--check", "a.json"])
    assert "--check goes with --render" in capsys.readouterr().err


def test_pmkl_p_argument(mod):
    assert mod.parse_args(["--pmkl-p", "4/3"]).pmkl_p == pytest.approx(4.0 / 3.0)
    assert mod.model_spec("pMKL", mod.parse_args(["--pmkl-p", "4/3"]))[0] == "pMKL (p = 4/3) over T, L, Q, G"
    with pytest.raises(SystemExit):
        mod.parse_args(["--pmkl-p", "0.5"])
    assert mod.parse_args([]).C == [1000.0, 3000.0, 10000.0, 30000.0]  # one step above the old edge 10000


# ------------------------------------------------------------------ tiny run on two folds, then --render
@pytest.fixture(scope="module")
def tiny(mod, tmp_path_factory):
    from problems.datasets import data_home

    if data_home() is None:
        pytest.skip("datasets absent: set CUTPLANE_DATA or provide ../shared/data")
    d = tmp_path_factory.mktemp("ocr")
    out = d / "ocr.md"
    rows = mod.main(TINY + ["--folds", *map(str, FOLDS), "--out", str(out)])
    return rows, out


def _table_row(text, label, solver_name):
    for line in text.splitlines():
        if line.startswith(f"| {label} | {solver_name} |"):
            return line
    raise AssertionError(f"no table row for {label} / {solver_name}")


@pytest.mark.data
def test_tiny_run_rows(mod, tiny):
    rows, out = tiny
    runs = ["mtl", "spom-last"]
    kernels = ("L", "Q", "MKL", "pMKL")
    assert [(r.fold, r.key, r.solver) for r in rows] == [(f, k, s) for f in FOLDS for k in kernels for s in runs]
    by = {(r.fold, r.key, r.solver): r for r in rows}
    for r in rows:
        assert [f.C for f in r.grid] == [10.0, 100.0]
        assert r.best.val == max(f.val for f in r.grid)  # chosen by validation
        assert r.test == pytest.approx(np.mean(r.correct))
    for f, key in itertools.product(FOLDS, kernels):
        for fm, fs in zip(by[f, key, "mtl"].grid, by[f, key, "spom-last"].grid):
            assert fm.lower_bound <= fm.objective + 1e-12
            assert fs.objective >= fm.lower_bound - 1e-9  # SPOM cannot go below the certified bound
        for k in ("MKL", "pMKL"):
            beta = by[f, k, "mtl"].beta
            assert list(beta) == ["L", "Q", "G", "T"] and np.isclose(sum(beta.values()), 1)
        assert by[f, "L", "mtl"].beta is None
    for f in FOLDS:  # one record per fold beside the page, its rows the run's rows
        rec = json.loads(mod.record_path(out, f).read_text())
        assert rec["fold"] == f and rec["val"]["fold"] == (f + 1) % 10
        assert [r["test"] for r in rec["rows"]] == [r.test for r in rows if r.fold == f]


@pytest.mark.data
def test_render_merges_folds(mod, tiny, tmp_path):
    from benchmarks.reproductions._ocr_folds import SINGLE, paired_difference

    rows, out = tiny
    page = tmp_path / "merged.md"
    recs = [str(mod.record_path(out, f)) for f in reversed(FOLDS)]  # order of the arguments does not matter
    runs = mod.main(["--render", *recs, "--out", str(page)])
    assert [r["fold"] for r in runs] == list(FOLDS)
    text = page.read_text()
    assert "**2 of 10 (0, 3)**" in text  # the page says which folds
    # the in-process page after the last fold and the page rendered from the JSON records agree
    strip = lambda t: re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "", t.split("## Results over folds")[1])  # noqa: E731
    assert strip(out.read_text()) == strip(text)
    by = {(r.fold, r.key, r.solver): r for r in rows}
    for key, solver, name in [
        (k, s, n)
        for k in ("L", "Q", "MKL", "pMKL")
        for s, n in (("mtl", "MTL^struct (certified)"), ("spom-last", "SPOM (last model)"))
    ]:
        tests = np.array([by[f, key, solver].test for f in FOLDS])
        label = by[FOLDS[0], key, solver].label
        line = _table_row(text.split("## Results over folds")[1], label, name)
        assert f"**{tests.mean():.2%}** +- {tests.std(ddof=1):.2%}" in line
        assert ", ".join(f"{t:.2%}" for t in tests) in line
        assert ", ".join(f"{by[f, key, solver].best.C:g}" for f in FOLDS) in line
    for solver, name in (("mtl", "MTL^struct (certified)"), ("spom-last", "SPOM (last model)")):
        means = {k: np.mean([by[f, k, solver].test for f in FOLDS]) for k in SINGLE if (FOLDS[0], k, solver) in by}
        best = max(means, key=means.get)
        for a in ("MKL", "pMKL"):
            pd = [paired_difference(by[f, a, solver].correct, by[f, best, solver].correct) for f in FOLDS]
            d = np.array([x[0] for x in pd])
            line = _table_row(text, name, f"{a} - {best} (best single kernel)")
            assert ", ".join(f"fold {f}: {m:+.2%} +- {s:.2%}" for f, (m, s) in zip(FOLDS, pd)) in line
            assert f"**{d.mean():+.2%}** +- {d.std(ddof=1):.2%}" in line
            assert f"| {int(np.sum(d > 0))} of 2 |" in line
    for f in FOLDS:  # every chosen C of this 2-value grid is at an edge, and the page says so
        for (ff, key, solver), r in by.items():
            if ff == f:
                assert f"fold {f} {key} [{solver}] C = {r.best.C:g}" in text
    n_nc = sum(g.status != "converged" for r in rows if r.solver == "mtl" for g in r.grid)
    assert (f"not converged** ({n_nc} of {2 * 4 * 2} fits" in text) if n_nc else ("every fit converged" in text)


@pytest.mark.data
def test_render_with_a_convergence_check(mod, tiny, tmp_path):
    """``--check``: records of re-run folds get their own section (chosen fits, verdict, paired
    differences, and the move from the main tables' chosen fit); the main tables do not change."""
    rows, out = tiny
    recs = [str(mod.record_path(out, f)) for f in FOLDS]
    check = json.loads(mod.record_path(out, FOLDS[1]).read_text())
    check["rows"] = [r for r in check["rows"] if r["key"] in ("Q", "MKL") and r["solver"] == "mtl"]
    check["settings"] = dict(check["settings"], mtl_time_limit=999.0)
    (tmp_path / "check_fold3.json").write_text(json.dumps(check))
    plain, checked = tmp_path / "plain.md", tmp_path / "checked.md"
    mod.main(["--render", *recs, "--out", str(plain)])
    mod.main(["--render", *recs, "--check", str(tmp_path / "check_fold3.json"), "--out", str(checked)])
    text = checked.read_text()
    head, section = text.split("## Convergence check: chosen fits re-run to their certified gap")
    assert (
        "## Per fold" in section
        and head.split("## Results over folds")[1]
        == plain.read_text().split("## Results over folds")[1].split("## Per fold")[0]
    )
    assert f"Fold(s) {FOLDS[1]} re-run for the kernels Q, MKL" in section and "999 s per fit" in section
    by = {(r.fold, r.key, r.solver): r for r in rows}
    for key in ("Q", "MKL"):
        r = by[FOLDS[1], key, "mtl"]
        assert (
            f"fold {FOLDS[1]} {key}: C = {r.best.C:g} ({r.best.status}) test {r.test:.2%} -> "
            f"C = {r.best.C:g} ({r.best.status}) test {r.test:.2%}"
        ) in section
    q, m = by[FOLDS[1], "Q", "mtl"], by[FOLDS[1], "MKL", "mtl"]
    assert f"MKL {m.test:.2%} (mean over 1 fold(s))" in section
    assert f"fold {FOLDS[1]}: {m.test - q.test:+.2%}" in section
    assert "Pooled over" not in section  # one checked fold: nothing to pool
    # a second block (the other fold): the MKL - Q differences pooled over both
    first = json.loads(mod.record_path(out, FOLDS[0]).read_text())
    first["rows"] = [r for r in first["rows"] if r["key"] in ("Q", "MKL") and r["solver"] == "mtl"]
    (tmp_path / "check_fold0.json").write_text(json.dumps(first))
    mod.main(
        [
            "--render",
            *recs,
            "--check",
            str(tmp_path / "check_fold0.json"),
            str(tmp_path / "check_fold3.json"),
            "--out",
            str(checked),
        ]
    )
    d = np.array([by[f, "MKL", "mtl"].test - by[f, "Q", "mtl"].test for f in FOLDS])
    assert (
        f"MKL - Q over the 2 checked folds ({FOLDS[0]}, {FOLDS[1]}): {d.mean():+.2%} +- {d.std(ddof=1):.2%} "
        f"(std), the first ahead on {int(np.sum(d > 0))} of 2."
    ) in checked.read_text()


@pytest.mark.data
def test_render_refuses_bad_records(mod, tiny, tmp_path):
    rows, out = tiny
    rec0 = mod.record_path(out, FOLDS[0])
    with pytest.raises(InputError, match="appears twice"):
        mod.main(["--render", str(rec0), str(rec0), "--out", str(tmp_path / "x.md")])
    other = json.loads(mod.record_path(out, FOLDS[1]).read_text())
    other["settings"]["C"] = [10.0, 1000.0]
    (tmp_path / "c.json").write_text(json.dumps(other))
    with pytest.raises(InputError, match="differs") as e:
        mod.main(["--render", str(rec0), str(tmp_path / "c.json"), "--out", str(tmp_path / "x.md")])
    assert e.value.field == "settings.C"
    bad = json.loads(rec0.read_text())
    bad["rows"][0]["test"] += 0.5  # accuracy no longer the mean of the stored correctness vector
    (tmp_path / "b.json").write_text(json.dumps(bad))
    with pytest.raises(InputError, match="does not match"):
        mod.main(["--render", str(tmp_path / "b.json"), "--out", str(tmp_path / "x.md")])
    (tmp_path / "t.json").write_text("{not json")
    with pytest.raises(InputError, match="not JSON"):
        mod.main(["--render", str(tmp_path / "t.json"), "--out", str(tmp_path / "x.md")])
    assert not (tmp_path / "x.md").exists()


@pytest.mark.data
def test_edges_and_not_converged_from_records(mod, tiny):
    from benchmarks.reproductions._ocr_folds import grid_edges, load_runs, not_converged

    rows, out = tiny
    runs = load_runs([mod.record_path(out, f) for f in FOLDS])
    # move every chosen fit to a 3-value grid's middle: no edge left; the first fit marked not converged
    for run in runs:
        for r in run["rows"]:
            g = r["grid"][r["chosen"]]
            r["grid"] = [dict(g, C=1.0), dict(g), dict(g, C=1e6)]
            r["chosen"] = 1
    assert grid_edges(runs) == []
    runs[0]["rows"][0]["grid"][1]["status"] = "time_limit"
    runs[0]["rows"][0]["grid"][1]["lower_bound"] = runs[0]["rows"][0]["grid"][1]["objective"] - 0.25
    nc = [x for x in not_converged(runs) if x[3] == "time_limit" and x[4] == pytest.approx(0.25)]
    assert [(x[0], x[1], x[6]) for x in nc] == [(FOLDS[0], runs[0]["rows"][0]["key"], True)]
    runs[1]["rows"][0]["chosen"] = 2
    assert grid_edges(runs) == [(FOLDS[1], runs[1]["rows"][0]["key"], runs[1]["rows"][0]["solver"], 1e6, "largest")]
