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
4. A C REFERENCE, measured: ``benchmarks/c_reference/viterbi_ref.c`` (plain C, our own code),
   compiled at run time with ``cc -O2`` and with ``cc -O3 -march=native`` into a temporary shared
   library loaded by ctypes. Two entry points on the same inputs: the Viterbi kernel alone on the
   same precomputed unary scores, and the full oracle (unary from the CSR feature ids times W,
   loss-augmented Viterbi, integer counts of the feature difference listed as a sparse cut). Its
   outputs are checked equal to ours (labels, loss, cut coordinates and values); the ratios
   ours/C are tokens/s over tokens/s (1.0 = as fast as C). Skipped, with the reason printed, when
   no C compiler is found.

Writes ``docs/results/viterbi_throughput.md`` from the run (``--no-write`` to skip).

The machine is shared; the load average is printed with the figures.

Run: ``python -m benchmarks.viterbi_throughput [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._timing import best_of

ROOT = Path(__file__).resolve().parent.parent
C_SOURCE = Path(__file__).resolve().parent / "c_reference" / "viterbi_ref.c"
C_FLAGS = {"cc -O2": ["-O2"], "cc -O3 -march=native": ["-O3", "-march=native"]}


class Rounds:
    """Interleaved timing: each round runs every entry once; best wall and best CPU time per entry.

    CPU time is ``time.thread_time`` of the calling thread: for single-threaded code (ours serial and
    the C reference alike) it excludes the time spent waiting for a core on a loaded machine.
    """

    def __init__(self):
        self.entries, self.wall, self.cpu, self.out = {}, {}, {}, {}

    def add(self, name, fn):
        self.entries[name] = fn

    def run(self, repeat):
        for _ in range(repeat):
            for name, fn in self.entries.items():
                t, c = time.perf_counter(), time.thread_time()
                self.out[name] = fn()
                c, t = time.thread_time() - c, time.perf_counter() - t
                self.wall[name] = min(self.wall.get(name, np.inf), t)
                self.cpu[name] = min(self.cpu.get(name, np.inf), c)


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


def compile_reference(flags, folder):
    """Compile the C reference into a shared library in ``folder``; (ctypes library, None) or (None, reason)."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return None, "no C compiler (cc/gcc/clang) on PATH"
    out = Path(folder) / f"viterbi_ref_{abs(hash(tuple(flags)))}.so"
    proc = subprocess.run(
        [cc, *flags, "-shared", "-fPIC", "-o", str(out), str(C_SOURCE)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        return None, f"{cc} {' '.join(flags)} failed: {proc.stderr.strip()[:300]}"
    lib = ctypes.CDLL(str(out))
    from numpy.ctypeslib import ndpointer

    f64, i64, i32 = (ndpointer(dt, flags="C_CONTIGUOUS") for dt in (np.float64, np.int64, np.int32))
    lib.viterbi_all.argtypes = [f64, i64, ctypes.c_int64, ctypes.c_int64, f64, i32, i32]
    lib.viterbi_all.restype = None
    lib.oracle_all.argtypes = [
        f64,
        f64,
        ctypes.c_int64,
        ctypes.c_int64,
        i64,
        i32,
        i64,
        ctypes.c_int64,
        i32,
        i32,
        i64,
        f64,
        ctypes.c_int64,
        ctypes.POINTER(ctypes.c_double),
    ]
    lib.oracle_all.restype = ctypes.c_int64
    return lib, None


def c_oracle(lib, W, trans, X, y, nnz_cap):
    """The C full oracle: (labels, loss, cut coordinates, cut values)."""
    n_features, K = W.shape
    yhat = np.empty(X.n_tokens, dtype=np.int32)
    idx = np.empty(nnz_cap, dtype=np.int64)
    val = np.empty(nnz_cap)
    loss = ctypes.c_double()
    q = lib.oracle_all(
        W,
        np.ascontiguousarray(trans),
        n_features,
        K,
        X.indptr.astype(np.int64),
        X.indices.astype(np.int32),
        X.sentence_ptr.astype(np.int64),
        X.n_sentences,
        y,
        yhat,
        idx,
        val,
        nnz_cap,
        ctypes.byref(loss),
    )
    return yhat, loss.value, idx[:q], val[:q]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-write", action="store_true", help="do not write docs/results/viterbi_throughput.md")
    args = ap.parse_args(argv)

    from numba import njit

    from cutplane.executors import ThreadExecutor
    from oracles.sequence import SequenceChunk, SequenceHingeOracle
    from oracles.viterbi import viterbi_kernel
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll
    from problems.sequence.feature_index import FeatureIndex, LabelAlphabet
    from problems.sequence.templates import CHUNKING_TEMPLATES

    report = []

    def say(line=""):
        print(line, flush=True)
        report.append(line)

    load0 = os.getloadavg()
    t = time.perf_counter()
    corpus = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"), n_columns=3)
    t_read = time.perf_counter() - t
    t = time.perf_counter()
    fi = FeatureIndex(CHUNKING_TEMPLATES)
    X = fi.fit_transform(corpus.inputs)
    t_feat = time.perf_counter() - t
    labels = LabelAlphabet.fit(corpus.labels)
    y = np.ascontiguousarray(corpus.label_codes(labels), dtype=np.int32)
    K, n_tok, nf = len(labels), X.n_tokens, fi.n_features_
    say(
        f"- machine: {os.cpu_count()} cores, shared; load average (1, 5, 15 min) at start "
        f"{load0[0]:.2f}, {load0[1]:.2f}, {load0[2]:.2f}"
    )
    say(f"- data: CoNLL-2000 train, {X.n_sentences} sentences, {n_tok} tokens, {K} labels; read {t_read:.2f} s")
    say(
        f"- features: {nf} from {len(fi.templates)} templates (CRF++ chunking set), nnz {X.indices.size} "
        f"({X.indices.size / n_tok:.1f}/token), build {t_feat:.2f} s; dim {fi.dim(K)}"
    )
    say(f"- times: best of {args.repeat}, random w ~ N(0, 0.1^2) (seed {args.seed})")
    say()

    rng = np.random.default_rng(args.seed)
    serial = SequenceHingeOracle(X.indptr, X.indices, X.sentence_ptr, y, nf, K)
    w = rng.standard_normal(serial.dim) * 0.1
    serial(w)  # compile / load the numba cache
    t_serial, res = best_of(lambda: serial(w), args.repeat)
    whole = SequenceChunk(
        serial.indptr, serial.indices, serial.sentence_ptr, serial.labels, 0, serial.n_samples, nf, K, True
    )
    t_chunk, part = best_of(lambda: whole(w), args.repeat)
    with ThreadExecutor(2) as ex:
        threaded = SequenceHingeOracle(X.indptr, X.indices, X.sentence_ptr, y, nf, K, executor=ex)
        threaded(w)
        t_thr, res2 = best_of(lambda: threaded(w), args.repeat)
    same = np.array_equal(res.argmax, res2.argmax) and abs(res.value - res2.value) <= 1e-9 * abs(res.value)
    say(f"oracle (1-slack cut at random w): value {res.value:.3f}, cut nnz {res.cut.slope.nnz}")
    say()
    say("| what | s/call | tokens/s |")
    say("|---|---:|---:|")
    say(f"| our oracle, serial (decode + sparse cut + CSR + value) | {t_serial:.3f} | {n_tok / t_serial:,.0f} |")
    say(f"| our oracle kernels alone (one chunk: decode + sparse cut) | {t_chunk:.3f} | {n_tok / t_chunk:,.0f} |")
    say(
        f"| our oracle, 2 threads (same cut as serial: {same}) | {t_thr:.3f} | {n_tok / t_thr:,.0f} "
        f"({n_tok / t_thr / 2:,.0f}/core) |"
    )

    W = w[: nf * K].reshape(nf, K)
    trans = w[nf * K :].reshape(K, K)
    t_unary_sp, unary = best_of(lambda: np.ascontiguousarray(X.to_csr() @ W), args.repeat)
    sp_ = np.ascontiguousarray(X.sentence_ptr, dtype=np.int64)

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
        return np.concatenate([numpy_viterbi_augmented(unary[a:b], trans, y[a:b]) for a, b in zip(sp_[:-1], sp_[1:])])

    t_ref, ref = best_of(reference, 1)
    say(f"| Viterbi kernel alone on precomputed unary, numba (ours) | {t_kernel:.3f} | {n_tok / t_kernel:,.0f} |")
    say(
        f"| Viterbi alone, numpy-vectorised (labels agree: {np.array_equal(ref, ours)}) | {t_ref:.3f} "
        f"| {n_tok / t_ref:,.0f} |"
    )
    say(f"| unary scores alone by scipy sparse X @ W | {t_unary_sp:.3f} | {n_tok / t_unary_sp:,.0f} |")

    libs = {}
    folder = tempfile.mkdtemp(prefix="cutplane-cref-")
    try:
        for name, flags in C_FLAGS.items():
            lib, why = compile_reference(flags, folder)
            if lib is None:
                say(f"| C reference `{name}` | skipped: {why} | |")
            else:
                libs[name] = lib
        cap = 2 * int(X.indices.size) * 2 + K * K
        c_lab = {name: np.empty(n_tok, dtype=np.int32) for name in libs}
        rounds = Rounds()  # ours and C interleaved, so a change of load hits both alike
        rounds.add("ours kernel", lambda: all_sentences(unary, trans_t, y, sp_, ours))
        rounds.add("ours oracle kernels", lambda: whole(w))
        rounds.add("ours oracle call", lambda: serial(w))
        for name, lib in libs.items():
            rounds.add(
                f"{name} kernel",
                lambda lib=lib, name=name: lib.viterbi_all(unary, sp_, X.n_sentences, K, trans_t, y, c_lab[name]),
            )
            rounds.add(f"{name} oracle", lambda lib=lib: c_oracle(lib, W, trans, X, y, cap))
        rounds.run(args.repeat)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    say()
    if libs:
        say(f"Ours and C interleaved ({args.repeat} rounds; best wall and best CPU time of the calling thread):")
        say()
        say("| what | wall s | CPU s | tokens/s (CPU) | outputs equal ours |")
        say("|---|---:|---:|---:|---|")
        for name in rounds.entries:
            equal = ""
            if name.endswith(" kernel") and not name.startswith("ours"):
                equal = str(np.array_equal(c_lab[name[:-7]], ours))
            elif name.endswith(" oracle"):
                c_yhat, c_loss, c_idx, c_val = rounds.out[name]
                equal = str(
                    np.array_equal(c_yhat, res.argmax)
                    and c_loss == part.loss
                    and np.array_equal(c_idx, part.indices)
                    and np.array_equal(c_val, part.values)
                )
            say(
                f"| {name} | {rounds.wall[name]:.3f} | {rounds.cpu[name]:.3f} | {n_tok / rounds.cpu[name]:,.0f} "
                f"| {equal} |"
            )
        say()
        say(
            "Ours / C (speed ratio = C time / our time; >= 0.5 is the issue's goal), from CPU time "
            "(wall time in brackets):"
        )
        say()
        say("| C build | Viterbi kernel | oracle kernels (decode + sparse cut) | full oracle call, serial |")
        say("|---|---:|---:|---:|")

        def ratio(c_name, ours_name):
            return (
                f"{rounds.cpu[c_name] / rounds.cpu[ours_name]:.2f} ({rounds.wall[c_name] / rounds.wall[ours_name]:.2f})"
            )

        for name in libs:
            say(
                f"| `{name}` | {ratio(name + ' kernel', 'ours kernel')} | "
                f"{ratio(name + ' oracle', 'ours oracle kernels')} | {ratio(name + ' oracle', 'ours oracle call')} |"
            )
    load1 = os.getloadavg()
    say()
    say(f"- load average at end: {load1[0]:.2f}, {load1[1]:.2f}, {load1[2]:.2f}")
    if not args.no_write:
        out = ROOT / "docs" / "results" / "viterbi_throughput.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            "# Loss-augmented Viterbi throughput: ours vs a C reference\n\n"
            "Written by `python -m benchmarks.viterbi_throughput` (C source: "
            "`benchmarks/c_reference/viterbi_ref.c`, compiled in the run).\n\n" + "\n".join(report) + "\n"
        )
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
