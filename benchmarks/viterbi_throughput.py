"""Loss-augmented Viterbi throughput on CoNLL-2000 train with the CRF++ chunking templates.

Measured in one run, side by side:

1. Feature pipeline: ``FeatureIndex(CHUNKING_TEMPLATES).fit_transform`` on train (21 U
   templates + B; CRF++ gives 460,638 features): seconds, features, nnz.
2. The 1-slack oracle (unary scores from the sparse features, loss-augmented Viterbi,
   sparse cut) at a random ``w``: seconds per full call, tokens/s, serial and with a
   2-thread executor (tokens/s per core = tokens/s / 2).
3. Kernels alone on precomputed unary scores: our numba Viterbi versus the REFERENCE, a plain
   numpy-vectorised Viterbi (one (K, K) broadcast + argmax per token, unary from a scipy
   sparse product), on the same scores; the outputs are checked to agree.
4. An estimate of a straightforward C implementation: per token, unary = nnz_per_token * K
   adds and Viterbi = K^2 adds + K^2 compares; at ~1e9 such scalar operations per second
   per core (an assumption, not a measurement: no C Viterbi is available here) this gives
   the "C estimate" in tokens/s, and our ratio to it.

The machine is shared; the load average is printed with the figures.

Run: ``python benchmarks/viterbi_throughput.py [--repeat 3]``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

C_OPS_PER_SECOND = 1e9  # assumed scalar add/compare rate of plain C on one core


def best_of(fn, repeat):
    """Smallest wall time of ``repeat`` calls (and the last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def numpy_viterbi_augmented(unary, trans, y):
    """REFERENCE: numpy-vectorised loss-augmented Viterbi on one sentence (same tie rule)."""
    T, K = unary.shape
    u = unary + 1.0
    u[np.arange(T), y] -= 1.0
    back = np.empty((T, K), dtype=np.int64)
    score = u[0].copy()
    for t in range(1, T):
        cand = score[:, None] + trans
        back[t] = np.argmax(cand, axis=0)
        score = cand[back[t], np.arange(K)] + u[t]
    out = np.empty(T, dtype=np.int64)
    out[-1] = np.argmax(score)
    for t in range(T - 1, 0, -1):
        out[t - 1] = back[t, out[t]]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from numba import njit

    from cutplane.parallel import ThreadExecutor
    from oracles.sequence import SequenceHingeOracle
    from oracles.viterbi import viterbi_kernel
    from problems.datasets import dataset_path
    from problems.feature_index import FeatureIndex, LabelAlphabet
    from problems.io.conll import read_conll
    from problems.templates import CHUNKING_TEMPLATES

    print(f"load average at start: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    t = time.perf_counter()
    corpus = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"), n_columns=3)
    t_read = time.perf_counter() - t
    t = time.perf_counter()
    fi = FeatureIndex(CHUNKING_TEMPLATES)
    X = fi.fit_transform(corpus.inputs)
    t_feat = time.perf_counter() - t
    labels = LabelAlphabet.fit(corpus.labels)
    y = corpus.label_codes(labels)
    K, n_tok = len(labels), X.n_tokens
    print(f"read train: {t_read:.2f} s; {X.n_sentences} sentences, {n_tok} tokens, {K} labels")
    print(f"features: {fi.n_features_} from {len(fi.templates)} templates, nnz {X.indices.size} "
          f"({X.indices.size / n_tok:.1f}/token), build {t_feat:.2f} s; dim {fi.dim(K)}")

    rng = np.random.default_rng(args.seed)
    serial = SequenceHingeOracle(X.indptr, X.indices, X.sentence_ptr, y, fi.n_features_, K)
    w = rng.standard_normal(serial.dim) * 0.1
    serial(w)  # compile / load the numba cache
    t_serial, res = best_of(lambda: serial(w), args.repeat)
    ex = ThreadExecutor(2)
    try:
        threaded = SequenceHingeOracle(X.indptr, X.indices, X.sentence_ptr, y, fi.n_features_, K, executor=ex)
        threaded(w)
        t_thr, res2 = best_of(lambda: threaded(w), args.repeat)
    finally:
        ex.close()
    same = np.array_equal(res.argmax, res2.argmax) and abs(res.value - res2.value) <= 1e-9 * abs(res.value)
    print(f"oracle (1-slack cut, random w): value {res.value:.3f}, cut nnz {res.cut.slope.nnz}")
    print(f"  serial   : {t_serial:.3f} s/call, {n_tok / t_serial:,.0f} tokens/s")
    print(f"  2 threads: {t_thr:.3f} s/call, {n_tok / t_thr:,.0f} tokens/s "
          f"({n_tok / t_thr / 2:,.0f} per core), speedup {t_serial / t_thr:.2f}x, same cut as serial: {same}")

    # kernels alone on the same unary scores
    W = w[:fi.n_features_ * K].reshape(fi.n_features_, K)
    trans = w[fi.n_features_ * K:].reshape(K, K)
    t_unary_sp, unary = best_of(lambda: np.asarray(X.to_csr() @ W), args.repeat)
    sp_ = X.sentence_ptr

    @njit(nogil=True)
    def all_sentences(unary, trans_t, y, sp_, out):
        K = unary.shape[1]
        m = 0
        for i in range(len(sp_) - 1):
            m = max(m, sp_[i + 1] - sp_[i])
        score = np.empty((m, K))
        back = np.zeros((m, K), dtype=np.int32)
        for i in range(len(sp_) - 1):
            a, b = sp_[i], sp_[i + 1]
            viterbi_kernel(unary[a:b], trans_t, y[a:b], True, score, back, out[a:b])

    ours = np.empty(n_tok, dtype=np.int32)
    trans_t = np.ascontiguousarray(trans.T)
    all_sentences(unary, trans_t, y, sp_, ours)
    t_kernel, _ = best_of(lambda: all_sentences(unary, trans_t, y, sp_, ours), args.repeat)

    def reference():
        return np.concatenate([numpy_viterbi_augmented(unary[a:b], trans, y[a:b])
                               for a, b in zip(sp_[:-1], sp_[1:])])

    t_ref, ref = best_of(reference, 1)
    agree = np.mean(ref == ours)
    print("kernels on precomputed unary (loss-augmented Viterbi only):")
    print(f"  numba (ours)            : {t_kernel:.3f} s, {n_tok / t_kernel:,.0f} tokens/s")
    print(f"  numpy-vectorised (REF.) : {t_ref:.3f} s, {n_tok / t_ref:,.0f} tokens/s; "
          f"ours/ref speed ratio {t_ref / t_kernel:.1f}x; labels agree on {100 * agree:.2f}% of tokens")
    print(f"  unary by scipy sparse X @ W: {t_unary_sp:.3f} s; oracle total serial {t_serial:.3f} s "
          f"(unary + Viterbi + sparse cut)")

    ops_unary = X.indices.size / n_tok * K
    ops_vit = 2 * K * K
    c_est = C_OPS_PER_SECOND / (ops_unary + ops_vit)
    c_est_vit = C_OPS_PER_SECOND / ops_vit
    print(f"C estimate (ASSUMED {C_OPS_PER_SECOND:.0e} scalar ops/s/core, not measured): "
          f"{ops_unary:.0f} unary + {ops_vit} Viterbi ops/token -> {c_est:,.0f} tokens/s for unary+Viterbi, "
          f"{c_est_vit:,.0f} tokens/s for Viterbi alone")
    print(f"  ours / C estimate: oracle serial {n_tok / t_serial / c_est:.2f}, "
          f"oracle per core with 2 threads {n_tok / t_thr / 2 / c_est:.2f}, "
          f"Viterbi kernel {n_tok / t_kernel / c_est_vit:.2f}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
