"""Oracle-phase speed-up of the executors on CoNLL-2000 chunking: serial vs threads, processes, Dask.

The 1-slack sequence oracle (CRF++ chunking templates, 22 labels, dim ~1e7) is called at two
points, a random ``w`` (many wrong labels: a large, dense-ish cut) and a trained-ish ``w`` (a
few BMRM iterations: few wrong labels, a small cut), with each executor on ``--workers`` workers
(4 chunks per 2 workers, balanced by tokens). Reported per executor and point, best of
``--repeat`` calls after a warm-up call (which binds, i.e. ships, the chunks):

- ``call``: the whole oracle call (validation of w, the map over chunks, the merge of the
  partial cuts, the CSR row, the value);
- ``map``: the map over chunks alone (decode + partial cuts on the workers);
- speed-up = serial time / parallel time, for both;
- CPU-bound speed-up (threads, processes): the serial run's CPU time over the largest CPU time
  one worker spent on its chunks (``time.thread_time`` inside the tasks). It is the speed-up the
  map reaches when every worker has a core of its own, and it exposes what our code controls:
  chunk imbalance, work done twice, memory stalls (they count as CPU time) - but not the wait
  for a core on a loaded machine, which the wall-time columns include.

Every parallel cut is checked equal to the serial one. The machine is shared with other jobs,
so the load average (1 min) is printed before and after each row and the number of cores the
run could expect is ``cores - load`` at best: a speed-up near 2 needs an otherwise idle machine.

Run: ``python -m benchmarks.parallel_speedup [--repeat 5] [--workers 2] [--no-dask]``; writes
``docs/results/parallel_speedup.md`` (``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from benchmarks._timing import best_of

ROOT = Path(__file__).resolve().parent.parent


def load_task():
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll
    from problems.sequence.feature_index import FeatureIndex, LabelAlphabet
    from problems.sequence.template_sets import CHUNKING

    corpus = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"), n_columns=3)
    fi = FeatureIndex(CHUNKING)
    X = fi.fit_transform(corpus.inputs)
    labels = LabelAlphabet.fit(corpus.labels)
    return X, np.asarray(corpus.label_codes(labels), dtype=np.int32), fi.n_features_, len(labels)


def trained_ish(oracle, X, y, nf, K):
    """A count-based tagger: ``w`` = s * centred log(1 + counts of (feature, label) and (label, label))
    in the gold data, the scale ``s`` among a few chosen for the fewest loss-augmented errors."""
    counts = np.bincount(X.indices.astype(np.int64) * K + np.repeat(y, np.diff(X.indptr)), minlength=nf * K)
    first = np.zeros(X.n_tokens, dtype=bool)
    first[X.sentence_ptr[:-1][np.diff(X.sentence_ptr) > 0]] = True
    t = np.flatnonzero(~first)
    trans = np.bincount(y[t - 1].astype(np.int64) * K + y[t], minlength=K * K)
    W = np.log1p(counts.reshape(nf, K).astype(float))
    T = np.log1p(trans.reshape(K, K).astype(float))
    base = np.concatenate([(W - W.mean(axis=1, keepdims=True)).ravel(), (T - T.mean()).ravel()])
    best = None
    for scale in (1.0, 3.0, 10.0):
        w = scale * base
        wrong = int(np.count_nonzero(oracle(w).argmax != y))
        if best is None or wrong < best[0]:
            best = (wrong, scale, w)
    return best


class Timed:
    """A chunk task that also returns the thread CPU time it used and where it ran."""

    def __init__(self, task):
        self.task = task

    def __call__(self, w, *args):
        import threading

        t = time.thread_time()
        out = self.task(w, *args)
        return time.thread_time() - t, (os.getpid(), threading.get_ident()), out


def cpu_split(executor, oracle, w, repeat):
    """(sum of the tasks' CPU times, largest per-worker CPU time): the serial work and the critical path."""
    bound = executor.bind([Timed(t) for t in oracle.tasks])
    bound.map(w)
    best = None
    for _ in range(repeat):
        per = {}
        parts = bound.map(w)
        for cpu, where, _ in parts:
            per[where] = per.get(where, 0.0) + cpu
        pair = (sum(p[0] for p in parts), max(per.values()))
        best = pair if best is None or pair[1] < best[1] else best
    bound.close()
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from cutplane.executors import available_executors, get_executor
    from oracles.sequence import SequenceHingeOracle

    report = []

    def say(line=""):
        print(line, flush=True)
        report.append(line)

    load0 = os.getloadavg()
    t = time.perf_counter()
    X, y, nf, K = load_task()
    say(
        f"- machine: {os.cpu_count()} cores, shared; load average at start {load0[0]:.2f} (1 min), "
        f"{load0[1]:.2f} (5 min)"
    )
    say(
        f"- data: CoNLL-2000 train, {X.n_sentences} sentences, {X.n_tokens} tokens, {nf} features, {K} labels "
        f"(loaded and featurised in {time.perf_counter() - t:.1f} s)"
    )

    def make(executor):
        return SequenceHingeOracle(
            X.indptr,
            X.indices,
            X.sentence_ptr,
            y,
            nf,
            K,
            executor=executor,
            n_chunks=None if executor is None else 2 * args.workers,
        )

    serial = make(None)
    rng = np.random.default_rng(args.seed)
    points = {"random w": 0.1 * rng.standard_normal(serial.dim)}
    wrong, scale, points["trained-ish w"] = trained_ish(serial, X, y, nf, K)
    say(f"- trained-ish w: count-based tagger (centred log counts x {scale:g}); best of {args.repeat} calls per row")
    names = [n for n in available_executors() if n != "serial" and not (n == "dask" and args.no_dask)]
    say()
    say(
        "| w | executor | wrong tokens | cut nnz | call s | map s | call speed-up | map speed-up | "
        "CPU-bound speed-up | load before | load after |"
    )
    say("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, w in points.items():
        serial(w)
        l0 = os.getloadavg()[0]
        t_ser, ref = best_of(lambda: serial(w), args.repeat)
        t_ser_map, _ = best_of(lambda: serial._map(w), args.repeat)
        wrong = int(np.count_nonzero(ref.argmax != y))
        say(
            f"| {label} | serial | {wrong} | {ref.cut.slope.nnz} | {t_ser:.3f} | {t_ser_map:.3f} | 1 | 1 | 1 | "
            f"{l0:.2f} | {os.getloadavg()[0]:.2f} |"
        )
        from cutplane.executors import SerialExecutor

        cpu_serial, _ = cpu_split(SerialExecutor(), serial, w, args.repeat)
        for name in names:
            with get_executor(name, args.workers) as ex:
                oracle = make(ex)
                res = oracle(w)  # binds (ships the chunks), compiles in the workers
                same = (
                    np.array_equal(res.argmax, ref.argmax)
                    and res.cut.slope.nnz == ref.cut.slope.nnz
                    and np.array_equal(res.cut.slope.indices, ref.cut.slope.indices)
                    and np.allclose(res.cut.slope.data, ref.cut.slope.data, rtol=1e-12)
                )
                if not same:
                    raise SystemExit(f"{name}: the cut differs from the serial one")
                l0 = os.getloadavg()[0]
                t_par, _ = best_of(lambda: oracle(w), args.repeat)
                t_map, _ = best_of(lambda: oracle._map(w), args.repeat)
                cpu_bound = "n/a"
                if name in ("threads", "processes"):
                    cpu_bound = f"{cpu_serial / cpu_split(ex, oracle, w, args.repeat)[1]:.2f}"
                say(
                    f"| {label} | {name} ({ex.n_workers}) | {wrong} | {res.cut.slope.nnz} | {t_par:.3f} | "
                    f"{t_map:.3f} | {t_ser / t_par:.2f} | {t_ser_map / t_map:.2f} | {cpu_bound} | "
                    f"{l0:.2f} | {os.getloadavg()[0]:.2f} |"
                )
    load1 = os.getloadavg()
    say()
    say(
        f"- load average at end {load1[0]:.2f} (1 min), {load1[1]:.2f} (5 min); every parallel cut equal to "
        f"the serial one"
    )
    if not args.no_write:
        out = ROOT / "docs" / "results" / "parallel_speedup.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            "# Oracle-phase speed-up of the executors (CoNLL-2000 chunking)\n\n"
            "Written by `python -m benchmarks.parallel_speedup`.\n\n" + "\n".join(report) + "\n"
        )
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
