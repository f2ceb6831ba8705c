"""SPOM Table 1 (upper part) on the OCR words: chain models with L, Q, G, their average, and MKL.

The OCR words as a first-order chain (:mod:`problems.ocr_chain`): per character a linear block
(128 pixels), the exact quadratic map of ``(x.x' + 1)^2`` and a Nystroem approximation of the
Gaussian kernel (sigma^2 = 5), each normalised to unit norm (unit-diagonal kernels), plus the
26x26 transition block. Every model is trained by SPOM (:func:`cutplane.online.spom`, 20 epochs,
``eta0`` from {0.01, 0.1, 1, 10} on a subsample, averaged model), as in SPOM Table 1:

* L, Q, G alone and the average kernel: ``1/2 ||w||^2`` over the blocks used (the average kernel
  (L + Q + G)/3 is plain L2 over the concatenation; the 1/3 is absorbed into C);
* MKL ``beta_0 T + beta_1 L + beta_2 Q + beta_3 G``: ``1/2 (sum_k ||w_k||)^2`` (MixedNorm p=1) over the
  three blocks and the transition block (the row "MKL beta_0, ..." of Table 1).

C (package scale, F = Omega + C * mean loss) is chosen per model on validation words of the
next fold; test on words of the remaining folds. Writes ``docs/results/ocr_chain_mkl.md``.

Usage::

    python examples/ocr_chain_mkl.py [--fold 0] [--C 100 1000] [--n-test-words 1500] [--epochs 20]
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cutplane.mixed_norm import MixedNorm  # noqa: E402
from cutplane.online import spom  # noqa: E402
from oracles.dense_sequence import DenseSequenceOracle  # noqa: E402
from problems.ocr_chain import OCRChainFeaturizer, fold_split, load_ocr_letters, select_words  # noqa: E402

MODELS = [("Linear (L)", ("linear",), 2.0), ("Quadratic (Q)", ("quadratic",), 2.0),
          ("Gaussian (G), sigma^2 = 5 (Nystroem)", ("gaussian",), 2.0),
          ("Average (L + Q + G)", ("linear", "quadratic", "gaussian"), 2.0),
          ("MKL beta_0 T + beta_1 L + beta_2 Q + beta_3 G", ("linear", "quadratic", "gaussian"), 1.0)]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fold", type=int, default=0, help="training fold; validation: the next fold")
    ap.add_argument("--n-train-words", type=int, default=0, help="0: the whole fold")
    ap.add_argument("--n-val-words", type=int, default=200)
    ap.add_argument("--n-test-words", type=int, default=1500, help="from the other 8 folds (0: all)")
    ap.add_argument("--C", type=float, nargs="+", default=[100.0, 1000.0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--n-components", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "ocr_chain_mkl.md"))
    return ap.parse_args(argv)


def _oracle(words, X, groups_of_cols):
    return DenseSequenceOracle(X, words.labels, words.word_ptr, 26, feature_groups=groups_of_cols)


def main(argv=None):
    args = parse_args(argv)
    t_all = time.perf_counter()
    letters = load_ocr_letters()
    rng = np.random.default_rng(args.seed)
    n_tr = None if args.n_train_words <= 0 else args.n_train_words
    train, _ = fold_split(letters, args.fold, n_train_words=n_tr, n_test_words=1, seed=args.seed)
    val_fold = (args.fold + 1) % 10
    val_idx = np.flatnonzero(letters.folds == val_fold)
    val_idx = np.sort(rng.choice(val_idx, size=min(args.n_val_words, val_idx.size), replace=False))
    test_idx = np.flatnonzero((letters.folds != args.fold) & (letters.folds != val_fold))
    n_test_all = test_idx.size
    if args.n_test_words > 0:
        test_idx = np.sort(rng.choice(test_idx, size=min(args.n_test_words, test_idx.size), replace=False))
    val, test = select_words(letters, val_idx), select_words(letters, test_idx)
    t = time.perf_counter()
    feat = OCRChainFeaturizer(n_components=args.n_components, seed=args.seed).fit(train.pixels)
    F = {name: feat.transform(w.pixels) for name, w in (("train", train), ("val", val), ("test", test))}
    feat_time = time.perf_counter() - t
    rows = []
    for label, blocks, p in MODELS:
        ids = [F["train"].block_names.index(b) for b in blocks]
        cols = np.flatnonzero(np.isin(F["train"].feature_groups, ids))
        fg = np.searchsorted(ids, F["train"].feature_groups[cols])  # blocks renumbered 0..len-1
        o_tr = _oracle(train, F["train"].X[:, cols], fg)
        o_va = _oracle(val, F["val"].X[:, cols], fg)
        o_te = _oracle(test, F["test"].X[:, cols], fg)
        reg = MixedNorm(o_tr.groups, p=p, n_groups=o_tr.n_groups)
        best, grid = None, []
        for C in args.C:
            t = time.perf_counter()
            res = spom(o_tr, reg, 1.0 / C, epochs=args.epochs, eta0=None, seed=args.seed, batch_oracle=o_tr,
                       tune_samples=min(200, o_tr.n_samples), tune_epochs=2)
            elapsed = time.perf_counter() - t
            acc_val = float(np.mean(o_va.decode(res.w) == val.labels))
            print(f"{label} C={C:g}: val {acc_val:.4f}, objective {res.objective:.5f}, {elapsed:.0f} s", flush=True)
            grid.append((C, acc_val, res.objective))
            if best is None or acc_val > best["val"]:
                best = dict(C=C, val=acc_val, res=res, time=elapsed)
        res = best["res"]
        acc_test = float(np.mean(o_te.decode(res.w) == test.labels))
        rows.append(dict(label=label, C=best["C"], val=best["val"], test=acc_test, time=best["time"],
                         train_time=res.time_s, objective=res.objective, eta0=res.eta0,
                         beta=res.kernel_weights if p == 1.0 else None, grid=grid))
        print(f"  -> test {acc_test:.4f}", flush=True)
    write_report(args, rows, train, val, test, val_fold, n_test_all, feat_time, time.perf_counter() - t_all)


def write_report(args, rows, train, val, test, val_fold, n_test_all, feat_time, total):
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "# OCR chain model: single kernels, average kernel and MKL (SPOM Table 1, upper part)", "",
        f"Written by `examples/ocr_chain_mkl.py` from its run (command: `python examples/ocr_chain_mkl.py "
        f"{' '.join(sys.argv[1:])}`), {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, on a "
        f"2-core machine shared with other jobs (times are wall-clock and noisy). Total script time {total:.0f} s.",
        "", "## Settings", "",
        f"- Train: **{train.n_words} words ({train.n_chars} characters) of fold {args.fold}**; **one fold only** "
        "(SPOM averages 10 runs, one per fold).",
        f"- C chosen per model from {{{', '.join(f'{c:g}' for c in args.C)}}} (package scale F = Omega + C * mean "
        f"loss; SPOM's C = 1/(lam N) is the package's C / N, N = {train.n_words}) by per-character accuracy on "
        f"{val.n_words} words of fold {val_fold} (SPOM: 5-fold CV over 6 values).",
        f"- Test: **{test.n_words} words ({test.n_chars} characters), a random subsample** (seed {args.seed}) of the "
        f"{n_test_all} words of the 8 remaining folds.",
        f"- Features per character, each block normalised to unit norm: linear (128), exact quadratic map of "
        f"(x.x' + 1)^2 (8257, sparse), Gaussian sigma^2 = 5 by Nystroem with {args.n_components} landmarks from the "
        f"training characters (an approximation of the kernel). Feature time {feat_time:.0f} s.",
        f"- Solver: SPOM, {args.epochs} epochs, eta_t = eta0/sqrt(t), eta0 from {{0.01, 0.1, 1, 10}} on a subsample "
        "of 200 training words (2 epochs each), averaged model. No certificate (SPOM is online).", "",
        "## Results", "",
        "| kernel | C | training time (SPOM rounds) | objective lam*Omega + mean loss | validation acc. | "
        "test acc. (per char.) | kernel weights (T, L, Q, G) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        beta = "-" if r["beta"] is None else ", ".join(f"{b:.3f}" for b in np.roll(r["beta"], 1))
        lines.append(f"| {r['label']} | {r['C']:g} | {r['train_time']:.0f} s | {r['objective']:.5f} | "
                     f"{r['val']:.2%} | **{r['test']:.2%}** | {beta} |")
    mkl = rows[-1]["test"]
    others = {r["label"]: r["test"] for r in rows[:-1]}
    best_other = max(others, key=others.get)
    verdict = ("reached" if mkl >= 0.875 else "missed") + f": MKL {mkl:.2%} vs the target 87.5%"
    verdict += (f"; MKL beats every single kernel and the average kernel (best other: {best_other}, "
                f"{others[best_other]:.2%})" if mkl > others[best_other] else
                f"; MKL does NOT beat {best_other} ({others[best_other]:.2%})")
    n_val = val.n_chars
    se = np.sqrt(mkl * (1 - mkl) / max(test.n_chars, 1))
    edge = [r["label"] for r in rows if len(args.C) > 1 and r["C"] in (min(args.C), max(args.C))]
    lines += ["", f"Target (SPOM Table 1: MKL 87.5% per character, above each single kernel and the average): "
              f"{verdict}.", "",
              "SPOM's kernel weights are beta_k = ||w_k|| / sum_j ||w_j|| of the averaged model (T = transitions).", "",
              f"Validation accuracy ({n_val} characters) for every C tried (objective on the scale lam*Omega + loss):",
              "", "| kernel | " + " | ".join(f"C = {c:g}" for c in args.C) + " |",
              "|---|" + "---|" * len(args.C)]
    for r in rows:
        lines.append(f"| {r['label']} | " + " | ".join(f"{a:.2%} ({o:.3f})" for _, a, o in r["grid"]) + " |")
    lines += ["", "## Reading it", "",
              f"- Sampling error: the test accuracy of one model on {test.n_chars} characters has a standard error of"
              f" about {se:.2%} (binomial, ignoring the correlation of characters within a word): differences "
              f"between rows below ~{2 * se:.1%} are not significant here (SPOM's +-0.3% is over 10 folds).",
              "- Models whose chosen C is at the edge of the grid (a larger or smaller C might do better): "
              + (", ".join(edge) if edge else "none") + ".",
              "- At the same C the MKL penalty 1/2 (sum_k ||w_k||)^2 lies between 1/2 ||w||^2 and m/2 ||w||^2 "
              "(m = 4 groups, Cauchy-Schwarz), so MKL is more strongly regularised than the average kernel at equal "
              "C; each model's C is therefore chosen separately, as SPOM did by cross-validation.",
              "- The Gaussian block is a Nystroem approximation with "
              f"{args.n_components} landmarks from the training characters, not the exact Gaussian kernel of SPOM "
              "Table 1.",
              f"- SPOM ran {args.epochs} epochs without a certificate, so the rows here are {args.epochs}-epoch "
              "SPOM models, not exact minimisers of their objectives (docs/results/ocr_spom_fig2.md measures how "
              "far SPOM's last and averaged models are from MTL^struct's certified optimum after a number of "
              "passes).", ""]
    out.write_text("\n".join(lines))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
