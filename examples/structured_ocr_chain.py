"""A chain model on the OCR letters, written from scratch: a Python Viterbi, then a numba one.

A word is a sequence of 16 x 8 binary images; its output is the sequence of letters. The model is a
first-order chain (Taskar et al. 2003) with the joint feature

    Phi(x, y) = sum_t x_t (x) e_{y_t}  +  sum_{t >= 1} e_{y_{t-1}} (x) e_{y_t}

(the pixels of letter ``t``, with a constant 1, copied into the block of its label; one count per
pair of consecutive labels), and the argmax is Viterbi. :class:`ChainModel` is the whole model in
about 40 lines, written against :class:`oracles.structured.StructuredModel` only: ``dim``,
``joint_feature``, ``argmax`` and ``loss_augmented_argmax`` (the Hamming loss, the contract's
default for array outputs, is added to the unary scores). Its Viterbi is plain Python and numpy;
:class:`NumbaChainModel` replaces only that function by a ``@numba.njit`` one. Both are trained by
:class:`problems.StructuredSVM` on the same words at the same ``C`` and must reach the same certified
objective; the script prints, for each, the test letter accuracy, the training time, the time per
oracle call and the time of the argmax alone, and draws the bounds and the times into ``OUT/structured_ocr_chain.png``.

The data: ``ocr-letters/letter.data.gz`` from the data folder (``CUTPLANE_DATA``); ``--n-train``
words of fold 0 for training and ``--n-test`` words of the other folds for testing.

Run ``python examples/structured_ocr_chain.py --out OUT`` from the repository root.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba
import numpy as np

from oracles.structured import StructuredModel


# --------------------------------------------------------------------------------- the model
class ChainModel(StructuredModel):
    """First-order chain: ``x`` of shape (T, n_features), ``y`` int array of shape (T,)."""

    def __init__(self, n_features, n_labels):
        self.n_features, self.n_labels = n_features, n_labels
        self.dim = n_features * n_labels + n_labels * n_labels

    def split(self, w):
        """``(W, T)``: unary weights (n_features, n_labels), transitions (n_labels, n_labels)."""
        n = self.n_features * self.n_labels
        return w[:n].reshape(self.n_features, self.n_labels), w[n:].reshape(self.n_labels, self.n_labels)

    def joint_feature(self, x, y):
        unary = x.T @ np.eye(self.n_labels)[y]  # pixels of letter t added to column y_t
        trans = np.zeros((self.n_labels, self.n_labels))
        np.add.at(trans, (y[:-1], y[1:]), 1.0)
        return np.concatenate([unary.ravel(), trans.ravel()])

    def argmax(self, x, w):
        W, T = self.split(w)
        return self.viterbi(x @ W, T)

    def loss_augmented_argmax(self, x, y, w):
        W, T = self.split(w)
        scores = x @ W + 1.0  # + Hamming loss: one for every label but the true one
        scores[np.arange(len(y)), y] -= 1.0
        return self.viterbi(scores, T)

    @staticmethod
    def viterbi(scores, trans):
        """``argmax_y sum_t scores[t, y_t] + sum_t trans[y_{t-1}, y_t]`` in Python and numpy."""
        n, K = scores.shape
        best, back = scores[0].copy(), np.zeros((n, K), dtype=np.int64)
        for t in range(1, n):
            cand = best[:, None] + trans  # cand[a, b]: best path ending in a, then b
            back[t] = cand.argmax(axis=0)
            best = cand.max(axis=0) + scores[t]
        y = np.empty(n, dtype=np.int64)
        y[-1] = best.argmax()
        for t in range(n - 1, 0, -1):
            y[t - 1] = back[t, y[t]]
        return y


@numba.njit(cache=True)
def viterbi_numba(scores, trans):
    """The same Viterbi compiled by numba (same tie rule: the first maximum)."""
    n, K = scores.shape
    best, new = scores[0].copy(), np.empty(K)
    back = np.zeros((n, K), dtype=np.int64)
    for t in range(1, n):
        for b in range(K):
            arg, val = 0, best[0] + trans[0, b]
            for a in range(1, K):
                if best[a] + trans[a, b] > val:
                    arg, val = a, best[a] + trans[a, b]
            back[t, b], new[b] = arg, val + scores[t, b]
        best[:] = new
    y = np.empty(n, dtype=np.int64)
    y[-1] = np.argmax(best)
    for t in range(n - 1, 0, -1):
        y[t - 1] = back[t, y[t]]
    return y


class NumbaChainModel(ChainModel):
    """:class:`ChainModel` with the numba Viterbi."""

    viterbi = staticmethod(viterbi_numba)


# ------------------------------------------------------------------------------- the data
def load_words(n_train=300, n_test=500, seed=0):
    """``(X_train, Y_train, X_test, Y_test)``: lists of (T, 129) pixel arrays (with a constant 1)
    and of int label arrays; train words from fold 0, test words from the other folds."""
    from problems.datasets import dataset_path
    from problems.io.ocr import read_ocr_letters

    letters = read_ocr_letters(dataset_path("ocr-letters", "letter.data.gz"))
    pixels = np.hstack([letters.pixels.astype(np.float64), np.ones((letters.n_letters, 1))])
    rng = np.random.default_rng(seed)
    train = np.sort(rng.permutation(np.flatnonzero(letters.folds == 0))[:n_train])
    test = np.sort(rng.permutation(np.flatnonzero(letters.folds != 0))[:n_test])

    def words(idx):
        spans = [(letters.word_ptr[j], letters.word_ptr[j + 1]) for j in idx]
        return [pixels[a:b] for a, b in spans], [letters.labels[a:b].astype(np.int64) for a, b in spans]

    return (*words(train), *words(test))


# ------------------------------------------------------------------------------- training
def run(n_train=300, n_test=500, C=10.0, eps=0.1, seed=0):
    """Train both models; ``{name: dict(model, svm, accuracy, train_s, per_call_s, n_calls, argmax_s)}``
    (``argmax_s``: the loss-augmented argmax of all training words alone, at the trained weights)."""
    from problems import StructuredSVM
    from problems.solvers import CuttingPlane

    X_train, Y_train, X_test, Y_test = load_words(n_train, n_test, seed)
    viterbi_numba(np.zeros((2, 26)), np.zeros((26, 26)))  # compile once, outside the timings
    runs = {}
    for name, model in (("python", ChainModel(129, 26)), ("numba", NumbaChainModel(129, 26))):
        svm = StructuredSVM(model, C=C, solver=CuttingPlane(eps=eps))
        t0 = time.perf_counter()
        svm.fit(X_train, Y_train)
        train_s = time.perf_counter() - t0
        hist = svm.result_.history
        argmax_s = min(_seconds(model.batch_loss_augmented_argmax, X_train, Y_train, svm.coef_) for _ in range(3))
        runs[name] = dict(
            model=model,
            svm=svm,
            accuracy=1.0 - sum(np.sum(p != y) for p, y in zip(svm.predict(X_test), Y_test)) / sum(map(len, Y_test)),
            train_s=train_s,
            per_call_s=float(np.mean(hist.oracle_time)),
            n_calls=len(hist.oracle_time),
            argmax_s=argmax_s,
        )
    return runs


def _seconds(fn, *args):
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def plot(runs, path):
    """Bounds per iteration of both runs, and their times; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from problems.plots import save_figure

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12.0, 4.5))
    for (name, r), color in zip(runs.items(), ("tab:orange", "tab:blue")):
        h = r["svm"].result_.history
        ax.semilogy(np.arange(1, len(h.gap) + 1), h.gap, color=color, label=f"{name} Viterbi: gap")
    ax.set(
        xlabel="iteration (oracle calls)", ylabel="certified gap (engine scale)", title="in-out BMRM on the chain model"
    )
    ax.legend()
    names, pos = list(runs), np.arange(len(runs))
    per_call = [1e3 * runs[n]["per_call_s"] for n in names]
    argmax = [1e3 * runs[n]["argmax_s"] for n in names]
    bx.bar(pos - 0.2, per_call, 0.4, label="oracle call (argmax + joint features + cut)")
    bx.bar(pos + 0.2, argmax, 0.4, label="loss-augmented argmax alone")
    for i, n in enumerate(names):
        r = runs[n]
        bx.annotate(
            f"train {r['train_s']:.1f} s\naccuracy {r['accuracy']:.3f}",
            (i, max(per_call[i], argmax[i])),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    bx.set_xticks(pos, [f"{n} Viterbi" for n in names])
    bx.set(ylabel="ms (all training words)", title="time per call, same model and data")
    bx.set_ylim(0, 1.35 * max(per_call + argmax))
    bx.legend(fontsize=8, loc="upper right")
    fig.suptitle("A chain model on the OCR letters, written against the StructuredModel contract")
    return save_figure(fig, path, dpi=100, make_dirs=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/structured"), help="output folder")
    parser.add_argument("--n-train", type=int, default=300, dest="n_train", help="training words (fold 0)")
    parser.add_argument("--n-test", type=int, default=500, dest="n_test", help="test words (folds 1-9)")
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--eps", type=float, default=0.1, help="certified tolerance on F")
    args = parser.parse_args(argv)
    runs = run(args.n_train, args.n_test, C=args.C, eps=args.eps)
    for name, r in runs.items():
        sys.stdout.write(
            f"{name:6s} Viterbi: objective {r['svm'].objective_:.6f}  lower bound {r['svm'].lower_bound_:.6f}  "
            f"test accuracy {r['accuracy']:.4f}  train {r['train_s']:.2f} s  "
            f"{1e3 * r['per_call_s']:.2f} ms per oracle call ({r['n_calls']} calls), "
            f"argmax alone {1e3 * r['argmax_s']:.2f} ms\n"
        )
    call = runs["python"]["per_call_s"] / runs["numba"]["per_call_s"]
    argmax = runs["python"]["argmax_s"] / runs["numba"]["argmax_s"]
    sys.stdout.write(f"numba: oracle call {call:.1f}x faster, argmax alone {argmax:.1f}x faster\n")
    sys.stdout.write(f"figure: {plot(runs, args.out / 'structured_ocr_chain.png')}\n")
    return runs


if __name__ == "__main__":
    main()
