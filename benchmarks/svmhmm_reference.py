"""SVM^hmm beside our 1-slack structural SVM on the same features: time to SVM^hmm's final primal (issue 22).

SVM^hmm's licence forbids redistribution, so the project never contains it: the script is given
the path of a local build (``--svm-hmm DIR`` with ``svm_hmm_learn`` in it; the source is public,
see issue 22 for where, and builds with ``make CFLAGS="-O3 -fcommon" LIBS=-lm``).

What runs, one after the other, in the same process tree:

1. the training file is featurised once by our :class:`~problems.sequence.feature_index.FeatureIndex`
   (CRF++ templates, ``min_count`` 1) and written in SVM^hmm's format (one token a line,
   ``TAG qid:SENTENCE FEATURE:1 ...``, tags and feature numbers from 1): both learners see the same
   features, and SVM^hmm's first-order model (``--t 1 --e 0``, its default) is our
   ``F(w) = 1/2 ||w||^2 + C * mean Hamming hinge`` with the ``B`` template's transitions;
2. ``svm_hmm_learn -c C -e E`` as a child process (wall and CPU seconds by :func:`os.wait4`, and
   the primal objective it prints, ``pval``);
3. our engine (:func:`cutplane.minimize`, ``lam = 1/C``, L2) for each ``--arms`` entry
   ``EXECUTOR[:K]`` (``serial``, ``threads``; ``K`` = ``cache_steps``), to the certified gap
   ``--eps`` on F or until its best objective is at most SVM^hmm's ``pval``; the per-iteration
   history (:attr:`cutplane.result.History.wall_time`, ``cpu_time``) gives the wall and CPU
   seconds at which our best objective first reached ``pval``.

The JSON record (``--json``) and the printed table give the ratios ours / SVM^hmm's training
seconds (CPU: process CPU of all threads; SVM^hmm is single-threaded).

Usage
-----
``python -m benchmarks.svmhmm_reference --svm-hmm /path/to/svm_hmm --C 100 --e 0.1 --arms serial threads threads:5``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks._timing import fixed

ROOT = Path(__file__).resolve().parent.parent


def write_svmhmm_file(path, features, labels_codes):
    """Write featurised sentences in SVM^hmm's format.

    Parameters
    ----------
    path : path-like
    features : FeatureMatrix-like
        ``indptr``, ``indices`` (0-based feature ids per token) and ``sentence_ptr``.
    labels_codes : ndarray of shape (n_tokens,)
        0-based label codes; written as tags from 1.
    """
    indptr, indices, sent = features.indptr, features.indices, features.sentence_ptr
    with open(path, "w") as fh:
        for i in range(len(sent) - 1):
            for t in range(sent[i], sent[i + 1]):
                ids = np.unique(indices[indptr[t] : indptr[t + 1]]) + 1
                fh.write(f"{int(labels_codes[t]) + 1} qid:{i + 1} " + " ".join(f"{f}:1" for f in ids) + "\n")


def run_svmhmm(binary_dir, train_file, model_file, C, e):
    """``svm_hmm_learn -c C -e e``: wall / CPU seconds of the child, and the figures it prints."""
    exe = Path(binary_dir) / "svm_hmm_learn"
    if not exe.is_file():
        raise SystemExit(f"svm_hmm_learn not found in {binary_dir} (give the folder of a local SVM^hmm build)")
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [str(exe), "-c", f"{C:g}", "-e", f"{e:g}", str(train_file), str(model_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"svm_hmm_learn failed:\n{out[-2000:]}")

    def grab(pattern, cast=float):
        m = re.search(pattern, out)
        return cast(m.group(1)) if m else None

    return dict(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        primal=grab(r"Primal objective value: pval=([-0-9.eE+]+)"),
        dual=grab(r"Dual objective value: dval=([-0-9.eE+]+)"),
        iterations=grab(r"Number of iterations: (\d+)", int),
        reported_cpu_s=grab(r"Runtime in cpu-seconds: ([0-9.]+)"),
        version_line=next((line for line in out.splitlines() if "SVM-HMM" in line or "SVM-struct" in line), None),
    )


def run_ours(oracle, C, eps, target, cache_steps, time_limit):
    """Our engine until converged at ``eps`` or F <= ``target``; seconds when ``target`` was reached."""
    from cutplane import minimize
    from cutplane.regularizers import L2

    def stop_at_target(info):
        return C * info.best_upper <= target

    oracle.clear_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(
            oracle,
            L2(),
            1.0 / C,
            eps=eps / C,
            max_iter=20000,
            time_limit=time_limit,
            cache_steps=cache_steps,
            callback=stop_at_target,
        )
    h = res.history
    reached = np.flatnonzero(C * h.best_upper <= target)
    k = int(reached[0]) if len(reached) else None
    return dict(
        status=res.status,
        iterations=int(res.n_iter),
        cached_cuts=int(res.n_cached_cuts),
        objective=float(C * res.objective),
        lower_bound=float(C * res.lower_bound),
        reached_target=k is not None,
        iteration_at_target=None if k is None else k + 1,
        wall_s_at_target=None if k is None else float(h.wall_time[k]),
        cpu_s_at_target=None if k is None else float(h.cpu_time[k]),
        wall_s=float(res.time_s),
        oracle_s=float(res.oracle_time_s),
        solver_s=float(res.solver_time_s),
        cache_s=float(res.cache_time_s),
    )


def render(record) -> str:
    """The markdown page of a record (or of several records, given as a list, in order)."""
    records = record if isinstance(record, list) else [record]
    out = [
        "# SVM^hmm beside our structural SVM: time to SVM^hmm's final primal (issue 22)",
        "",
        "Written by `benchmarks/svmhmm_reference.py` (never by hand) from its JSON records. SVM^hmm 3.10 is a "
        "local build (its licence forbids redistribution: never in this repository). Both learners see the same "
        "features (our CRF++ chunking template features of CoNLL-2000's training file, no cutoff) and minimise "
        "the same `F(w) = 1/2 ||w||^2 + C * mean Hamming hinge`; ours runs until its best objective is at most "
        "SVM^hmm's final primal `pval`, and the history's clocks give the seconds at which it first was. CPU "
        "seconds are the process's (all threads); SVM^hmm is single-threaded. `EXECUTOR:K` is an arm with "
        "`cache_steps = K`.",
        "",
    ]
    out += _across_runs(records)
    for rec in records:
        peer = rec["svm_hmm"]
        out += [
            f"## C = {rec['C']:g}, SVM^hmm -e {rec['e']:g}, {rec['n_sentences']} sentences",
            "",
            f"Command: `{rec['command']}` on {rec['date']} (load average after: {rec['load_average']}); "
            f"{rec['n_features']} features, {rec['n_labels']} labels.",
            "",
            f"SVM^hmm: primal `pval` {peer['primal']}, dual {peer['dual']}, {peer['iterations']} iterations, "
            f"{fixed(peer['cpu_s'], 1)} s CPU, {fixed(peer['wall_s'], 1)} s wall.",
            "",
            "| ours | reached pval | at iteration | cached cuts | CPU s | CPU / SVM^hmm | wall s | wall / SVM^hmm | "
            "F at stop | lower bound at stop |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for a in rec["ours"]:
            out.append(
                f"| {a['arm']} | {'yes' if a['reached_target'] else 'no'} | {a['iteration_at_target'] or '-'} | "
                f"{a['cached_cuts']} | {fixed(a['cpu_s_at_target'], 1)} | {fixed(a['cpu_ratio'], 3)} | "
                f"{fixed(a['wall_s_at_target'], 1)} | {fixed(a['wall_ratio'], 3)} | {a['objective']:.6g} | "
                f"{a['lower_bound']:.6g} |"
            )
        out.append("")
    return "\n".join(out)


def _across_runs(records) -> list:
    """A table of each arm's ratios over the records (min / median / max): timings on a shared
    2-core machine vary by 10-15 % from run to run, on both sides, so one run says little."""
    arms: dict = {}
    for rec in records:
        for a in rec["ours"]:
            if a["cpu_ratio"] is not None:
                arms.setdefault(a["arm"], []).append((a["cpu_ratio"], a["wall_ratio"]))
    if len(records) < 2 or not arms:
        return []
    out = [
        f"## Across the {len(records)} runs below",
        "",
        "| arm | runs | CPU / SVM^hmm (min / median / max) | wall / SVM^hmm (min / median / max) |",
        "|---|---|---|---|",
    ]
    for arm, ratios in arms.items():
        cpu, wall = np.array(ratios).T
        spans = [" / ".join(fixed(f(x), 3) for f in (np.min, np.median, np.max)) for x in (cpu, wall)]
        out.append(f"| {arm} | {len(ratios)} | {spans[0]} | {spans[1]} |")
    return [*out, ""]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.svmhmm_reference", description=__doc__.split("\n")[0])
    ap.add_argument("--svm-hmm", dest="svm_hmm", help="folder of a local SVM^hmm build")
    ap.add_argument(
        "--render", nargs="+", default=None, help="only write the page --out from these JSON records (in order)"
    )
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "svmhmm_reference.md"))
    ap.add_argument("--C", type=float, default=100.0)
    ap.add_argument("--e", type=float, default=0.1, help="SVM^hmm's -e")
    ap.add_argument("--eps", type=float, default=1.0, help="our certified gap on F (default 1)")
    ap.add_argument("--max-sentences", type=int, default=None, help="first N training sentences (default: all)")
    ap.add_argument(
        "--arms", nargs="+", default=["serial", "threads"], help="EXECUTOR[:CACHE_STEPS], e.g. serial threads:5"
    )
    ap.add_argument("--time-limit", type=float, default=1800.0, help="seconds per run of ours")
    ap.add_argument("--work", default=None, help="folder for the SVM^hmm files (default: a temporary one)")
    ap.add_argument("--json", default=None, help="write the record here")
    args = ap.parse_args(argv)
    if args.render:
        Path(args.out).write_text(render([json.loads(Path(p).read_text()) for p in args.render]) + "\n")
        return 0
    if args.svm_hmm is None:
        ap.error("--svm-hmm DIR is needed (the folder of a local SVM^hmm build), unless --render")

    import tempfile

    from cutplane.executors import get_executor
    from oracles.sequence import SequenceHingeOracle
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll
    from problems.sequence.feature_index import FeatureIndex, LabelAlphabet
    from problems.sequence.template_sets import CHUNKING

    data = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"))
    n = args.max_sentences or len(data.inputs)
    X, y = data.inputs[:n], data.labels[:n]
    index = FeatureIndex(CHUNKING, min_count=1)
    feats = index.fit_transform(X)
    labels = LabelAlphabet.fit(y)
    codes = labels.encode_corpus(y)
    tmp = tempfile.TemporaryDirectory(prefix="svmhmm_") if args.work is None else None
    work = Path(tmp.name if tmp else args.work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        train_file = work / "train.dat"
        write_svmhmm_file(train_file, feats, codes)
        print(f"SVM^hmm -c {args.C:g} -e {args.e:g} on {n} sentences ...", flush=True)
        peer = run_svmhmm(args.svm_hmm, train_file, work / "model.dat", args.C, args.e)
        print(f"SVM^hmm: pval {peer['primal']}, {peer['cpu_s']:.1f} s CPU, {peer['wall_s']:.1f} s wall", flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()
    arms = []
    for arm in args.arms:
        name, _, k = arm.partition(":")
        executor = get_executor(name)
        oracle = SequenceHingeOracle(
            feats.indptr,
            feats.indices,
            feats.sentence_ptr,
            codes,
            feats.n_features,
            len(labels),
            transitions=index.has_transitions,
            executor=executor,
        )
        rec = run_ours(oracle, args.C, args.eps, peer["primal"], int(k or 0), args.time_limit)
        executor.close()
        rec.update(
            arm=arm,
            cpu_ratio=None if rec["cpu_s_at_target"] is None else rec["cpu_s_at_target"] / peer["cpu_s"],
            wall_ratio=None if rec["wall_s_at_target"] is None else rec["wall_s_at_target"] / peer["wall_s"],
        )
        arms.append(rec)
        print(
            f"ours {arm}: reached {rec['reached_target']} at iteration {rec['iteration_at_target']}, "
            f"CPU {rec['cpu_s_at_target']} s (x{rec['cpu_ratio']}), wall {rec['wall_s_at_target']} s "
            f"(x{rec['wall_ratio']}); {rec['status']} F {rec['objective']:.6g} lower {rec['lower_bound']:.6g}",
            flush=True,
        )
    record = dict(
        command="python -m benchmarks.svmhmm_reference " + " ".join(sys.argv[1:] if argv is None else argv),
        date=time.strftime("%Y-%m-%d %H:%M"),
        n_sentences=n,
        n_features=int(feats.n_features),
        n_labels=len(labels),
        C=args.C,
        e=args.e,
        load_average=[round(v, 2) for v in os.getloadavg()],
        svm_hmm=peer,
        ours=arms,
    )
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
