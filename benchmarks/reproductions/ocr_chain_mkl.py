"""SPOM Table 1 (upper part) on the OCR words: chain models with L, Q, G, their average, and MKL.

The OCR words as a first-order chain (:mod:`problems.mkl.ocr_chain`): per character a linear block
(128 pixels), the exact quadratic map of ``(x.x' + 1)^2`` and a Nystroem approximation of the
Gaussian kernel (sigma^2 = 5), each normalised to unit norm (unit-diagonal kernels), plus the
26x26 transition block. Models (the objective ``F(w) = lam * Omega(w) + mean loss``, lam = 1/C):

* L, Q, G alone and the average kernel: ``1/2 ||w||^2`` over the blocks used (the average kernel
  (L + Q + G)/3 is plain L2 over the concatenation; the 1/3 is absorbed into C);
* MKL ``beta_0 T + beta_1 L + beta_2 Q + beta_3 G``: ``1/2 (sum_k ||w_k||)^2`` (MixedNorm p=1) over the
  three blocks and the transition block (the row "MKL beta_0, ..." of Table 1);
* pMKL (optional, ``--kernels ... pMKL``): the non-sparse p-block norm of pMTL^struct,
  ``1/2 (sum_k ||w_k||^p)^(2/p)`` (MixedNorm p = ``--pmkl-p``, default 4/3) over the same groups.

Solvers (``--solver``, one or both, each a row per model):

* ``mtl``: the certified batch solver (:func:`cutplane.minimize`, BMRM; ``MixedNorm(p)`` for MKL and
  pMKL, ``L2`` otherwise) to a gap ``--mtl-rel-eps * F(0)`` or ``--mtl-time-limit``;
* ``spom``: :func:`cutplane.online.spom`, ``--epochs`` passes, ``eta_t = eta0/sqrt(t)``, eta0 from
  ``--eta-grid`` by Table 1's rule (lowest objective after ``--tune-epochs`` epochs on
  ``--tune-words`` training words), returning the last (Alg. 3) and/or averaged (Alg. 1) model
  (``--model``, a row each).

C (package scale, F = Omega + C * mean loss) is chosen per model, solver and fold on validation
words of the next fold; test on words of the remaining folds. Each fold's run is stored as a JSON
record ``<page stem>_fold<F>.json`` beside the page (all rows, the fits at every C, per-character
test correctness), and the page is rendered from the records of the folds run by this process;
``--render A.json B.json ...`` rewrites the page from several records (one per fold) without
training: mean +- std over folds and MKL's paired differences (see :mod:`_ocr_folds`).

Usage::

    python -m benchmarks.reproductions.ocr_chain_mkl [--fold 0 | --folds 0 1 2] [--kernels L Q G A MKL pMKL]
    python -m benchmarks.reproductions.ocr_chain_mkl --render docs/results/ocr_chain_mkl_fold0.json ...
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from benchmarks.reproductions._ocr_folds import (  # noqa: F401
    SOLVER_NAMES,
    load_runs,
    p_text,
    pack_correct,
    paired_difference,
    write_record,
)
from benchmarks.reproductions._ocr_page import render_page
from cutplane import minimize
from cutplane.groups import group_norms
from cutplane.online import spom
from cutplane.regularizers import L2, MixedNorm
from oracles.dense_sequence import DenseSequenceOracle
from problems.mkl.ocr_chain import OCRChainFeaturizer, fold_split, load_ocr_letters, select_words

ROOT = Path(__file__).resolve().parents[2]  # the repository root

_LQG = ("linear", "quadratic", "gaussian")
#: key -> (label, feature blocks, p of the mixed norm: 2 is L2, 1 is MKL, None is ``--pmkl-p``)
MODELS = {
    "L": ("Linear (L)", ("linear",), 2.0),
    "Q": ("Quadratic (Q)", ("quadratic",), 2.0),
    "G": ("Gaussian (G), sigma^2 = 5 (Nystroem)", ("gaussian",), 2.0),
    "A": ("Average (L + Q + G)", _LQG, 2.0),
    "MKL": ("MKL beta_0 T + beta_1 L + beta_2 Q + beta_3 G", _LQG, 1.0),
    "pMKL": ("pMKL (p = {p}) over T, L, Q, G", _LQG, None),
}
DEFAULT_KERNELS = ["L", "Q", "G", "A", "MKL"]
BLOCK_KEYS = {"linear": "L", "quadratic": "Q", "gaussian": "G"}


def model_spec(key, args):
    """``(label, blocks, p)`` of a model, pMKL's p from ``--pmkl-p``."""
    label, blocks, p = MODELS[key]
    if p is None:
        p = float(args.pmkl_p)
        label = label.format(p=p_text(p))
    return label, blocks, p


def run_keys(args):
    """The trainings per model: ``"mtl"`` and ``"spom-<model>"`` for each ``--model``."""
    return (["mtl"] if "mtl" in args.solver else []) + (
        [f"spom-{m}" for m in args.model] if "spom" in args.solver else []
    )


@dataclass
class Fit:
    """One trained model at one C: its objective, certificate (MTL) and validation accuracy."""

    C: float
    w: np.ndarray = field(repr=False)
    objective: float
    lower_bound: float | None  # certified lower bound on min F (MTL), None for SPOM
    status: str
    time_s: float
    detail: str  # "n_iter" for MTL, "eta0" for SPOM
    val: float = float("nan")


@dataclass
class Row:
    """The model chosen by validation for one (kernel, solver, fold), and its test accuracy."""

    key: str
    label: str
    solver: str
    best: Fit
    grid: list
    test: float
    beta: dict | None  # group-norm share per group name (L, Q, G, T) for MKL and pMKL
    correct: np.ndarray = field(repr=False, default=None)  # per test character: prediction right
    fold: int = 0


def _p(s):
    p = float(Fraction(s))
    if not p >= 1.0:
        raise argparse.ArgumentTypeError(f"p must be >= 1, got {s}")
    return p


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fold", type=int, default=0, help="training fold; validation: the next fold")
    ap.add_argument(
        "--folds",
        type=int,
        nargs="+",
        choices=range(10),
        default=None,
        help="several folds in sequence (overrides --fold); record and page written after each",
    )
    ap.add_argument(
        "--render",
        nargs="+",
        metavar="JSON",
        default=None,
        help="no training: rewrite the page --out from these fold records",
    )
    ap.add_argument(
        "--check",
        nargs="+",
        metavar="JSON",
        default=None,
        help="with --render: records of folds re-run with a longer --mtl-time-limit, shown in a "
        "section of their own (convergence check), one block per record",
    )
    ap.add_argument("--n-train-words", type=int, default=0, help="0: the whole fold")
    ap.add_argument("--n-val-words", type=int, default=200)
    ap.add_argument("--n-test-words", type=int, default=1500, help="from the other 8 folds (0: all)")
    ap.add_argument("--C", type=float, nargs="+", default=[1000.0, 3000.0, 10000.0, 30000.0])
    ap.add_argument("--kernels", nargs="+", choices=list(MODELS), default=DEFAULT_KERNELS)
    ap.add_argument("--pmkl-p", type=_p, default=4.0 / 3.0, help="p of the pMKL row (e.g. 4/3)")
    ap.add_argument("--solver", nargs="+", choices=list(SOLVER_NAMES), default=["mtl", "spom"])
    ap.add_argument("--mtl-rel-eps", type=float, default=1e-3, help="MTL gap relative to F(0) = R(0)")
    ap.add_argument("--mtl-time-limit", type=float, default=90.0, help="seconds per MTL fit")
    ap.add_argument("--epochs", type=int, default=20, help="SPOM passes")
    ap.add_argument(
        "--model",
        nargs="+",
        choices=["last", "averaged"],
        default=["last", "averaged"],
        help="SPOM's returned model(s): Alg. 3's last iterate, Alg. 1's average",
    )
    ap.add_argument("--eta-grid", type=float, nargs="+", default=[0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0])
    ap.add_argument("--tune-epochs", type=int, default=5, help="epochs of SPOM's eta0 rule (Table 1: 5)")
    ap.add_argument("--tune-words", type=int, default=200, help="training words of the eta0 rule (0: all)")
    ap.add_argument("--n-components", type=int, default=500, help="Nystroem landmarks of the Gaussian block")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--out",
        default=str(ROOT / "docs" / "results" / "ocr_chain_mkl.md"),
        help="the page; fold records go beside it as <stem>_fold<F>.json",
    )
    args = ap.parse_args(argv)
    if args.folds is None:
        args.folds = [args.fold]
    if len(set(args.folds)) != len(args.folds):
        ap.error(f"--folds repeats a fold: {args.folds}")
    if args.check and not args.render:
        ap.error("--check goes with --render (it adds the records of re-run folds to a rendered page)")
    return args


def record_path(out, fold) -> Path:
    """Where a fold's record goes: beside the page, ``<stem>_fold<F>.json``."""
    out = Path(out)
    return out.with_name(f"{out.stem}_fold{fold}.json")


def _oracle(words, F, blocks):
    ids = [F.block_names.index(b) for b in blocks]
    cols = np.flatnonzero(np.isin(F.feature_groups, ids))
    fg = np.searchsorted(ids, F.feature_groups[cols])  # blocks renumbered 0..len-1
    return DenseSequenceOracle(F.X[:, cols], words.labels, words.word_ptr, 26, feature_groups=fg)


def fit(solver, oracle, p, C, args) -> Fit:
    """Minimise ``Omega / C + mean loss`` by MTL^struct (certified) or SPOM."""
    lam = 1.0 / C
    t = time.perf_counter()
    if solver == "mtl":
        reg = L2() if p == 2.0 else MixedNorm(oracle.groups, p=p, n_groups=oracle.n_groups)
        risk0 = float(oracle(np.zeros(oracle.dim)).value)
        res = minimize(
            oracle,
            reg,
            lam,
            eps=args.mtl_rel_eps * risk0,
            max_iter=100000,
            time_limit=args.mtl_time_limit,
            prune_after=20,
        )
        return Fit(
            C,
            res.w,
            float(res.objective),
            float(res.lower_bound),
            res.status,
            time.perf_counter() - t,
            f"{res.n_iter} it.",
        )
    reg = MixedNorm(oracle.groups, p=p, n_groups=oracle.n_groups)
    n_tune = oracle.n_samples if args.tune_words <= 0 else min(args.tune_words, oracle.n_samples)
    res = spom(
        oracle,
        reg,
        lam,
        epochs=args.epochs,
        eta0=None,
        averaged=solver == "spom-averaged",
        eta_grid=tuple(args.eta_grid),
        seed=args.seed,
        batch_oracle=oracle,
        tune_samples=n_tune,
        tune_epochs=args.tune_epochs,
    )
    return Fit(C, res.w, float(res.objective), None, res.status, time.perf_counter() - t, f"eta0 {res.eta0:g}")


def accuracy(oracle, w, labels) -> float:
    return float(np.mean(oracle.decode(w) == labels))


def choose(fits):
    """The fit of highest validation accuracy (ties: the first, i.e. the smallest C)."""
    return max(fits, key=lambda f: f.val)


def run_fold(args, letters, fold):
    """Train every model and solver on ``fold``; return the rows and the record's data sizes."""
    rng = np.random.default_rng(args.seed)
    n_tr = None if args.n_train_words <= 0 else args.n_train_words
    train, _ = fold_split(letters, fold, n_train_words=n_tr, n_test_words=1, seed=args.seed)
    val_fold = (fold + 1) % 10
    val_idx = np.flatnonzero(letters.folds == val_fold)
    val_idx = np.sort(rng.choice(val_idx, size=min(args.n_val_words, val_idx.size), replace=False))
    test_idx = np.flatnonzero((letters.folds != fold) & (letters.folds != val_fold))
    n_test_all = test_idx.size
    if args.n_test_words > 0:
        test_idx = np.sort(rng.choice(test_idx, size=min(args.n_test_words, test_idx.size), replace=False))
    val, test = select_words(letters, val_idx), select_words(letters, test_idx)
    t = time.perf_counter()
    feat = OCRChainFeaturizer(n_components=args.n_components, seed=args.seed).fit(train.pixels)
    F = {name: feat.transform(w.pixels) for name, w in (("train", train), ("val", val), ("test", test))}
    feat_time = time.perf_counter() - t
    rows = []
    for key in args.kernels:
        label, blocks, p = model_spec(key, args)
        o_tr, o_va, o_te = (_oracle(w, F[n], blocks) for n, w in (("train", train), ("val", val), ("test", test)))
        for solver in run_keys(args):
            grid = []
            for C in args.C:
                f = fit(solver, o_tr, p, C, args)
                f.val = accuracy(o_va, f.w, val.labels)
                grid.append(f)
                print(
                    f"fold {fold} {label} [{solver}] C={C:g}: val {f.val:.4f}, objective {f.objective:.5f}"
                    + ("" if f.lower_bound is None else f" (lower {f.lower_bound:.5f}, {f.status})")
                    + f", {f.detail}, {f.time_s:.0f} s",
                    flush=True,
                )
            best = choose(grid)
            beta = None
            if p != 2.0:
                b = group_norms(best.w, o_tr.groups, o_tr.n_groups)
                b = b / b.sum() if b.sum() > 0 else b
                beta = dict(zip([BLOCK_KEYS[x] for x in blocks] + ["T"], map(float, b)))
            correct = o_te.decode(best.w) == test.labels
            rows.append(Row(key, label, solver, best, grid, float(np.mean(correct)), beta, correct, fold))
            print(f"  -> C={best.C:g}, test {rows[-1].test:.4f}", flush=True)
    sizes = {
        "train": {"words": train.n_words, "chars": train.n_chars},
        "val": {"fold": val_fold, "words": val.n_words, "chars": val.n_chars},
        "test": {"words": test.n_words, "chars": test.n_chars, "pool_words": int(n_test_all)},
        "feat_time_s": feat_time,
    }
    return rows, sizes


def _fit_record(f: Fit) -> dict:
    return {
        "C": f.C,
        "objective": f.objective,
        "lower_bound": f.lower_bound,
        "status": f.status,
        "time_s": f.time_s,
        "detail": f.detail,
        "val": f.val,
    }


def fold_record(args, fold, rows, sizes, total_s, command) -> dict:
    """The JSON record of one fold's run (see :mod:`_ocr_folds`)."""
    from benchmarks.reproductions._ocr_folds import FORMAT, MERGE_KEYS

    settings = {k: getattr(args, k) for k in MERGE_KEYS + ("seed",)}
    return {
        "format": FORMAT,
        "fold": fold,
        "command": command,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "total_s": total_s,
        "settings": settings,
        **sizes,
        "rows": [
            {
                "key": r.key,
                "label": r.label,
                "solver": r.solver,
                "test": r.test,
                "beta": r.beta,
                "chosen": next(i for i, g in enumerate(r.grid) if g is r.best),
                "grid": [_fit_record(g) for g in r.grid],
                "correct": pack_correct(r.correct),
            }
            for r in rows
        ],
    }


def main(argv=None):
    """Train the folds and write their records and the page; with ``--render``, only the page.

    Returns the rows of every fold trained (a list of :class:`Row`), or with ``--render`` the
    merged records.
    """
    args = parse_args(argv)
    cmd = (
        "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python "
        f"-m benchmarks.reproductions.ocr_chain_mkl {' '.join(sys.argv[1:] if argv is None else argv)}"
    ).rstrip()
    if args.render:
        runs = load_runs(args.render)
        render_page(
            runs,
            args.out,
            command=cmd.split(" python ", 1)[1],
            checks=[load_runs([c]) for c in args.check] if args.check else None,
        )
        print(f"wrote {args.out} from folds {[r['fold'] for r in runs]}")
        return runs
    letters = load_ocr_letters()
    all_rows, paths = [], []
    for fold in args.folds:
        t = time.perf_counter()
        rows, sizes = run_fold(args, letters, fold)
        all_rows += rows
        paths.append(record_path(args.out, fold))
        write_record(fold_record(args, fold, rows, sizes, time.perf_counter() - t, cmd), paths[-1])
        render_page(load_runs(paths), args.out)
        print(f"wrote {paths[-1]} and {args.out}", flush=True)
    return all_rows


if __name__ == "__main__":
    main()
