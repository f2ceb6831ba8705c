"""Executors side by side on the 1-slack SSVM, and what the Dask executor costs at N workers.

For each dataset (CoNLL-2000 with CRF++'s chunking templates; CoNLL-2002 Spanish with the 134
templates of MTL sec. 3.3), the engine runs BMRM (``L2``, ``lam = 1 / C``) from ``w = 0`` for
``--iters`` iterations with each arm of ``--arms``, all in this one run, ``--rounds`` times
(interleaved: each round runs every arm once, and an arm's speed-ups are taken against the
serial arm of its own round, so that a slow minute of this shared machine weighs on both):

- ``serial``, ``threads:K``, ``processes:K``: the in-machine executors;
- ``dask:K``: a ``LocalCluster`` of K worker processes with the mirror (the workers rebuild
  ``w`` from the cuts they hold, :mod:`cutplane.executors.mirror`), one chunk per worker thread
  (the default); ``dask:K/c``: c chunks per worker; ``dask:KxT``: T threads per worker;
- ``dask-dense:K``: the same cluster sending ``w`` at every call (the executor before the mirror).

Every arm follows the same iterates (the cuts are integer counts; the values are summed per chunk
in another order, so a borderline decision can differ in the last digits). Reported per arm, over
the iterations after the first (the first sends ``w = 0`` to every worker and binds the chunks):
median seconds per oracle call and per engine iteration, speed-ups against serial (same run),
bytes sent per iteration (median) and against shipping the dense ``w`` to every worker, and, for
the mirror, per call: the slowest worker's seconds in its chunk tasks and in the rebuild, and the
rest (the trip). The serial call over the worker tasks alone is the speed-up the arm would have if
the trip and the rebuild cost nothing: on a machine whose client, scheduler and workers share the
cores, the most it allows.

The cost model at N workers (per iteration after the first, one new cut of ``z`` stored
nonzeros, ``t`` cuts with a nonzero dual of ``Z`` stored nonzeros in all, ``n`` coordinates):

- bytes to each worker: ``b = q z + 16 t + c0`` (``q`` bytes per nonzero of the packed new cut,
  measured: :class:`cutplane.executors.mirror.PackedRow`; a row id and a coefficient per
  combined cut; ``c0`` fixed), so ``N b`` per iteration in all, against ``8 n N`` for the dense
  ``w``;
- rebuild seconds per worker: ``r = alpha n + beta Z`` (zero the output, add the rows), with
  ``alpha`` and ``beta`` fitted on the measured calls of every ``dask:K`` arm;
- oracle seconds: ``T(N) = T_1 / min(N, cores) + r + o`` (N: workers times their threads), with
  ``T_1`` the one-worker cluster's
  call minus its rebuild and ``o`` the per-call overhead measured on ``dask:1``;
- a 10 Gbit/s link out of the client carries ``N b`` bytes per call in ``N b / 1.25e9`` s; it is the
  bottleneck once that exceeds the workers' compute ``T_s / N``:
  ``N* = sqrt(1.25e9 T_s / b)`` (``sqrt(1.25e9 T_s / (8 n))`` for the dense ``w``).

The model's bytes are checked against the counted ones, its rebuild and oracle seconds against
the measured arms.

Run: ``python -m benchmarks.dask_scaling [--data conll2000 conll2002] [--iters 40]`` (about 15
minutes on 2 cores for both datasets); writes ``docs/results/dask_scaling.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = {
    "conll2000": dict(templates="chunking", C=100.0, label="CoNLL-2000 chunking (CRF++ chunking templates)"),
    "conll2002": dict(templates="ner134", C=1000.0, label="CoNLL-2002 Spanish NER (134 templates)"),
}
LINK_BYTES_PER_S = 10e9 / 8  # 10 Gbit/s


def load(name):
    from benchmarks.crfsuite_reference import load_dataset, resolve_templates
    from problems.sequence.feature_index import FeatureIndex, LabelAlphabet

    t0 = time.perf_counter()
    train, _ = load_dataset(name)
    index = FeatureIndex(resolve_templates(DATA[name]["templates"]), min_count=1)
    feats = index.fit_transform(train.inputs)
    labels = LabelAlphabet.fit(train.labels)
    codes = labels.encode_corpus(train.labels)
    return dict(
        feats=feats,
        codes=codes,
        n_labels=len(labels),
        transitions=index.has_transitions,
        n_sentences=len(train.inputs),
        n_tokens=int(feats.sentence_ptr[-1]),
        load_s=time.perf_counter() - t0,
    )


def make_executor(arm):
    from cutplane.executors import DaskExecutor, get_executor

    name, _, spec = arm.partition(":")
    k, _, per = spec.partition("/")
    k, _, threads = k.partition("x")
    k = int(k) if k else None
    threads = int(threads) if threads else 1
    per = int(per) if per else None  # the executor's default: one chunk per worker thread
    if name == "dask":
        return DaskExecutor(k, mirror=True, chunks_per_worker=per, threads_per_worker=threads)
    if name == "dask-dense":
        return DaskExecutor(k, mirror=False, chunks_per_worker=per, threads_per_worker=threads)
    return get_executor(name, k)


def _trim_memory():
    """Hand the memory freed by the last arm back to the system (glibc's ``malloc_trim``), so
    that one arm's leftovers in the allocator's arenas do not add up over the arms of a run (on
    CoNLL-2002 they did: the run was killed for want of memory); elsewhere nothing."""
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    name = ctypes.util.find_library("c")
    if name and hasattr(os, "sched_getaffinity"):  # Linux
        trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
        if trim is not None:
            trim(0)


def run_arm(task, arm, C, iters):
    from cutplane import minimize
    from cutplane.regularizers import L2
    from oracles.sequence import SequenceHingeOracle

    feats = task["feats"]
    load0 = os.getloadavg()[0]
    ex = make_executor(arm)
    try:
        oracle = SequenceHingeOracle(
            feats.indptr,
            feats.indices,
            feats.sentence_ptr,
            task["codes"],
            feats.n_features,
            task["n_labels"],
            transitions=task["transitions"],
            executor=ex,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = minimize(oracle, L2(), 1.0 / C, eps=1e-9, max_iter=iters)
        h = res.history
        calls = [c._asdict() for c in getattr(ex, "calls", [])]
    finally:
        ex.close()
        _trim_memory()
    wall = np.diff(np.concatenate([[0.0], h.wall_time]))
    return dict(
        arm=arm,
        workers=int(getattr(ex, "n_workers", 1)),
        threads=int(getattr(ex, "threads_per_worker", 1)),
        n_chunks=len(oracle.chunks),
        dim=int(oracle.dim),
        iterations=int(res.n_iter),
        objective=float(C * res.objective),
        lower_bound=float(C * res.lower_bound),
        oracle_s=h.oracle_time.tolist(),
        iteration_s=wall.tolist(),
        solver_s=h.solver_time.tolist(),
        bytes_sent=h.bytes_sent.tolist(),
        calls=calls,
        load_before=load0,
        load_after=os.getloadavg()[0],
    )


def _median_after_first(values):
    v = np.asarray(values, dtype=float)[1:]
    return float(np.median(v)) if v.size else math.nan


def fit_model(records, cores):
    """Rebuild seconds ``r = alpha n + beta Z`` by least squares over every mirrored call of the
    ``dask:K`` arms with ``K <= cores`` (after the first two calls of each, which compile and warm
    the caches)."""
    rows, ys = [], []
    for rec in records:
        if not rec["arm"].startswith("dask:") or rec["workers"] > cores:
            continue  # fitted where every worker has a core of its own
        for c in [c for c in rec["calls"] if c["mirrored"]][2:]:
            rows.append([rec["dim"], c["combined_nnz"]])
            ys.append(c["rebuild_s"])
    if len(rows) < 3:
        return None
    coef, *_ = np.linalg.lstsq(np.asarray(rows, float), np.asarray(ys), rcond=None)
    return dict(alpha=float(coef[0]), beta=float(coef[1]), n_calls=len(rows))


def _rounds(records):
    """The records by arm, in the order of the first round: ``{arm: [record of each round]}``."""
    by_arm: dict = {}
    for rec in records:
        by_arm.setdefault(rec["arm"], []).append(rec)
    return by_arm


def _ratios(base, times):
    """Per-round speed-ups ``base / time``: ``(median, (least, largest))``."""
    r = np.asarray(base, dtype=float) / np.asarray(times, dtype=float)
    return float(np.median(r)), (float(r.min()), float(r.max()))


def summarise(records, cores):
    """Per arm, the medians over its rounds; speed-ups are taken round by round against that
    round's serial arm (the arms of a round run one after the other, so they share the machine's
    state), then their median, least and largest are reported."""
    by_arm = _rounds(records)
    serials = by_arm.get("serial", [])
    s_ors = [_median_after_first(r["oracle_s"]) for r in serials]
    s_its = [_median_after_first(r["iteration_s"]) for r in serials]
    s_or = float(np.median(s_ors)) if s_ors else math.nan
    s_it = float(np.median(s_its)) if s_its else math.nan
    model = fit_model(records, cores)
    one = by_arm.get("dask:1")
    rows = []
    for arm, recs in by_arm.items():
        rec = recs[0]
        ors = [_median_after_first(r["oracle_s"]) for r in recs]
        its = [_median_after_first(r["iteration_s"]) for r in recs]
        base_or = s_ors if len(s_ors) == len(recs) else [s_or] * len(recs)
        base_it = s_its if len(s_its) == len(recs) else [s_it] * len(recs)
        orc, it = float(np.median(ors)), float(np.median(its))
        oracle_speedup, oracle_range = _ratios(base_or, ors)
        iteration_speedup, iteration_range = _ratios(base_it, its)
        dense = 8 * rec["dim"] * rec["workers"]
        mirrored = [c for r in recs for c in r["calls"] if c["mirrored"]]
        row = dict(
            arm=arm,
            workers=rec["workers"],
            threads=rec.get("threads", 1),
            rounds=len(recs),
            oracle_s=orc,
            iteration_s=it,
            oracle_speedup=oracle_speedup,
            iteration_speedup=iteration_speedup,
            oracle_speedup_range=oracle_range,
            iteration_speedup_range=iteration_range,
            bytes_median=_median_after_first(rec["bytes_sent"]),
            dense_bytes=dense,
            objective=rec["objective"],
            load=(min(r["load_before"] for r in recs), max(r["load_after"] for r in recs)),
        )
        row["reduction"] = dense / row["bytes_median"] if row["bytes_median"] else math.nan
        after_first = np.asarray(rec["bytes_sent"][1:], dtype=float)
        row["reduction_min"] = float(dense / after_first.max()) if after_first.size and after_first.max() else math.nan
        if mirrored:
            late = mirrored[1:] or mirrored
            row["rebuild_s"] = float(np.median([c["rebuild_s"] for c in late]))
            computes = [c.get("compute_s", 0.0) for c in late]
            if all(computes):  # the workers' own seconds in the chunk tasks (newer records)
                row["compute_s"] = float(np.median(computes))
                row["trip_s"] = float(np.median([c["seconds"] - c["rebuild_s"] - c["compute_s"] for c in late]))
                # the speed-up if sending, rebuilding and gathering cost nothing
                row["compute_speedup"] = s_or / row["compute_s"]
            row["new_nnz"] = float(np.median([c["new_nnz"] for c in late]))
            row["combined_rows"] = float(np.median([c["combined_rows"] for c in late]))
            row["combined_nnz"] = float(np.median([c["combined_nnz"] for c in late]))
            row["q"] = q = bytes_per_nonzero(rec)
            predicted = [_model_bytes(c, rec["workers"], q) for c in late]
            errors = [abs(p - c["bytes_sent"]) / c["bytes_sent"] for p, c in zip(predicted, late)]
            row["bytes_model_median_error"] = float(np.median(errors))
            row["bytes_model_max_error"] = float(max(errors))
            if model is not None:  # workers beyond the cores share them: the rebuild takes N / cores longer
                share = max(1.0, rec["workers"] / cores)
                row["rebuild_model_s"] = share * (model["alpha"] * rec["dim"] + model["beta"] * row["combined_nnz"])
        rows.append(row)
    out = dict(rows=rows, model=model, serial_oracle_s=s_or, serial_iteration_s=s_it)
    if one is not None and model is not None:
        one_row = next(r for r in rows if r["arm"] == "dask:1")
        t1 = one_row["oracle_s"] - one_row.get("rebuild_s", 0.0)
        dask_serial_gap = t1 - s_or  # the cluster's overhead per call beyond the serial compute
        out["T1_s"] = t1
        out["overhead_s"] = dask_serial_gap
        for row in rows:
            if row["arm"].startswith("dask:"):
                n = row["workers"] * row["threads"]  # cores the tasks can use
                row["oracle_model_s"] = (
                    s_or / min(n, cores) + max(dask_serial_gap, 0.0) + row.get("rebuild_model_s", 0.0)
                )
        mirrored_rows = [r for r in rows if r["arm"].startswith("dask:") and "new_nnz" in r]
        if mirrored_rows:
            ref = max(mirrored_rows, key=lambda r: r["workers"])  # its q bounds the q of more workers
            out["N_star_q_from"] = ref["arm"]
            b = bytes_to_a_worker(ref["q"], ref["new_nnz"], ref["combined_rows"], 1)
            out["bytes_per_worker_model"] = b
            out["N_star_mirror"] = math.sqrt(LINK_BYTES_PER_S * s_or / b)
            out["N_star_dense"] = math.sqrt(LINK_BYTES_PER_S * s_or / (8 * records[0]["dim"]))
    out["rounds"] = max((r["rounds"] for r in rows), default=1)
    out["serial_oracle_range"] = (min(s_ors), max(s_ors)) if s_ors else None
    return out


def _model_bytes(call, workers, q):
    """The model's bytes of one mirrored call: :func:`bytes_to_a_worker`, ``workers`` times."""
    return workers * bytes_to_a_worker(q, call["new_nnz"], call["combined_rows"], call["new_rows"])


def bytes_to_a_worker(q, new_nnz, combined_rows, new_rows):
    """The model's ``b``: ``q`` per stored nonzero of the new rows (the packed index gaps and counts
    of the entries that worker's chunks read), a row id and a coefficient per combined row, a
    header per new row, a fixed part (the probes, the update's header)."""
    return q * new_nnz + 16 * combined_rows + 40 * new_rows + 16 * 16 + 16


def bytes_per_nonzero(record):
    """``q`` of an arm: the bytes one worker receives per stored nonzero of a new cut, over its
    mirrored calls (a ratio of sums). It falls with the number of workers: each is sent the
    entries its own chunks read."""
    calls = [c for c in record["calls"] if c["mirrored"] and c["new_nnz"]]  # (bytes: the same every round)
    total = sum(c["new_nnz"] for c in calls) * record["workers"]
    return sum(c["new_bytes"] for c in calls) / total if total else math.nan


def render(results, cores) -> str:
    lines = [
        "# Executors on the 1-slack SSVM, and the Dask executor at N workers",
        "",
        "Written by `python -m benchmarks.dask_scaling` (method and model in its docstring).",
        "",
        f"- machine: {cores} cores, shared with other machines' work (the serial arm's spread over the rounds "
        "is given under each table); every arm in one run, one after the other, in rounds (each round runs every arm once); times "
        "are medians over the rounds, speed-ups are taken against the serial arm of the same round (median, "
        "and least to largest over the rounds); load average (1 min) from the least before an arm to the most "
        "after",
        "- `dask:K`: `LocalCluster` of K worker processes (one thread each), the workers rebuild `w` from the "
        "cuts they hold, one chunk per worker thread (the default); `dask:K/c`: c chunks per worker; `dask:KxT`: "
        "T threads per worker; `dask-dense:K`: `w` sent at every call",
        "- worker tasks s, rebuild s, trip s: per mirrored call, the slowest worker's seconds in its chunk "
        "tasks and in the rebuild of `w`, and the rest of the call (sending, the actors' round trip, the "
        "partial sums coming back); the speed-up at zero trip and rebuild is the serial call over the worker "
        "tasks alone, the most this machine allows that arm",
        "- medians over the iterations after the first (the first sends `w = 0` and binds the chunks)",
        "",
    ]
    for res in results:
        s = res["summary"]
        lines += [
            f"## {res['label']}",
            "",
            f"{res['n_sentences']} sentences, {res['n_tokens']} tokens, dim {res['dim']} "
            f"(dense `w`: {8 * res['dim'] / 1e6:.1f} MB), C = {res['C']:g}, {res['iters']} iterations of BMRM from "
            f"`w = 0`; loaded and featurised in {res['load_s']:.1f} s.",
            "",
            "| arm | chunks | oracle s/call | speed-up | iteration s | speed-up | bytes/iteration | vs dense `w` "
            "(median, least) | worker tasks s | rebuild s | trip s | speed-up at zero trip and rebuild | final F "
            "| load |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        chunks = {rec["arm"]: rec["n_chunks"] for rec in res["records"]}
        for row in s["rows"]:
            lines.append(
                f"| {row['arm']} | {chunks[row['arm']]} | {row['oracle_s']:.3f} | {_speedup(row, 'oracle')} | "
                f"{row['iteration_s']:.3f} | {_speedup(row, 'iteration')} | {_mb(row['bytes_median'])} | "
                f"{_reductions(row)} | {_fmt(row.get('compute_s'), 3)} | "
                f"{_fmt(row.get('rebuild_s'), 3)} | {_fmt(row.get('trip_s'), 3)} | "
                f"{_fmt(row.get('compute_speedup'), 2)} | {row['objective']:.6g} | "
                f"{row['load'][0]:.2f} to {row['load'][1]:.2f} |"
            )
        lines.append("")
        spread = s.get("serial_oracle_range")
        if spread is not None and s.get("rounds", 1) > 1:
            lines.append(
                f"- the serial call took {spread[0]:.3f} to {spread[1]:.3f} s over the {s['rounds']} rounds "
                f"({100 * (spread[1] / spread[0] - 1):.0f}% apart): this machine's run-to-run spread"
            )
        for row in s["rows"]:
            if row["arm"] in ("dask:2", "dask:2/2", "dask:1x2"):
                lines.append(
                    f"- {row['arm']} against serial, same rounds: oracle phase {_speedup(row, 'oracle')}x, engine "
                    f"iteration {_speedup(row, 'iteration')}x; bytes per iteration after the first "
                    f"{_ratio(row['reduction'])} fewer than the dense `w` to every worker (median), "
                    f"{_ratio(row['reduction_min'])} at the least"
                )
        lines.append("")
        m = s.get("model")
        if m is not None:
            lines += [
                "Cost model (see the docstring), fitted and checked on this run:",
                "",
                f"- rebuild seconds per worker `r = alpha n + beta Z`: alpha = {m['alpha']:.3g} s per coordinate, "
                f"beta = {m['beta']:.3g} s per stored nonzero ({m['n_calls']} mirrored calls)",
                "- `q`: bytes a worker receives per stored nonzero of a new cut (stored: 6 to 8 bytes; sent: the "
                "entries its chunks read, packed)",
            ]
            if "T1_s" in s:
                lines.append(
                    f"- one-worker cluster: {s['T1_s']:.3f} s per call without the rebuild, "
                    f"{s['overhead_s']:+.3f} s against the serial call (the cluster's overhead `o`)"
                )
            lines += [
                "",
                "| arm | new-cut nonzeros | q | cuts combined | their nonzeros | bytes: model error (median, max) | "
                "rebuild s | model | oracle s | model |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for row in s["rows"]:
                if "new_nnz" not in row:
                    continue
                lines.append(
                    f"| {row['arm']} | {row['new_nnz']:.0f} | {row['q']:.2f} | {row['combined_rows']:.0f} | "
                    f"{row['combined_nnz']:.0f} | "
                    f"{100 * row['bytes_model_median_error']:.1f} %, {100 * row['bytes_model_max_error']:.1f} % | "
                    f"{row['rebuild_s']:.4f} | "
                    f"{_fmt(row.get('rebuild_model_s'))} | {row['oracle_s']:.3f} | {_fmt(row.get('oracle_model_s'))} |"
                )
            if "N_star_mirror" in s:
                lines += [
                    "",
                    f"- bytes per worker per iteration (model, median cut, `q` of {s['N_star_q_from']}): "
                    f"{_mb(s['bytes_per_worker_model'])}; "
                    f"a 10 Gbit/s link out of the client becomes the bottleneck at N* = {s['N_star_mirror']:.0f} "
                    f"workers with the mirror, N* = {s['N_star_dense']:.1f} sending the dense `w` "
                    f"(`N* = sqrt(1.25e9 T_s / b)`, `T_s` = the serial call, {s['serial_oracle_s']:.3f} s; "
                    "with more workers `q` only falls, so N* is a lower bound).",
                ]
        lines.append("")
    return "\n".join(lines)


def _fmt(x, digits=4):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _reductions(row):
    """``median, least`` bytes reduction, or nothing for an arm that sends no bytes."""
    if math.isnan(row["reduction"]):
        return ""
    return f"{_ratio(row['reduction'])}, {_ratio(row['reduction_min'])}"


def _speedup(row, what):
    """The median speed-up, with its least and largest over the rounds when there are several."""
    text = f"{row[what + '_speedup']:.2f}"
    lo, hi = row.get(what + "_speedup_range", (None, None))
    if row.get("rounds", 1) < 2 or lo is None or row["arm"] == "serial":
        return text
    return f"{text} ({lo:.2f} to {hi:.2f})"


def _mb(b):
    return "" if b is None or math.isnan(b) else f"{b / 1e6:.2f} MB"


def _ratio(x):
    return "" if x is None or math.isnan(x) else f"{x:.1f}x"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["conll2000", "conll2002"], choices=sorted(DATA))
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=1, help="run every arm this many times, interleaved")
    ap.add_argument(
        "--arms",
        nargs="+",
        default=[
            "serial",
            "threads:2",
            "processes:2",
            "dask:1",
            "dask:2",
            "dask:2/2",
            "dask:1x2",
            "dask:4",
            "dask-dense:2",
        ],
    )
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "dask_scaling.md"))
    ap.add_argument("--render", nargs="*", help="only render these JSON files to --out")
    args = ap.parse_args(argv)
    cores = os.cpu_count() or 1
    if args.render:
        results = [r for p in args.render for r in json.loads(Path(p).read_text())["results"]]
        for res in results:  # the summary again from the records (the model may have changed)
            res["summary"] = summarise(res["records"], cores)
        Path(args.out).write_text(render(results, cores) + "\n")
        return 0
    results = []
    for name in args.data:
        task = load(name)
        C = DATA[name]["C"]
        print(f"{name}: {task['n_sentences']} sentences loaded in {task['load_s']:.1f} s", flush=True)
        records = []
        for round_ in range(args.rounds):
            for arm in args.arms:
                rec = run_arm(task, arm, C, args.iters)
                rec["round"] = round_
                records.append(rec)
                print(
                    f"  round {round_ + 1}, {arm}: oracle {_median_after_first(rec['oracle_s']):.3f} s, iteration "
                    f"{_median_after_first(rec['iteration_s']):.3f} s, bytes {_median_after_first(rec['bytes_sent']):.3g}, "
                    f"F {rec['objective']:.6g}",
                    flush=True,
                )
        results.append(
            dict(
                data=name,
                label=DATA[name]["label"],
                C=C,
                iters=args.iters,
                rounds=args.rounds,
                dim=records[0]["dim"],
                n_sentences=task["n_sentences"],
                n_tokens=task["n_tokens"],
                load_s=task["load_s"],
                records=records,
                summary=summarise(records, cores),
            )
        )
        del task
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(dict(results=results), indent=1) + "\n")
    out.write_text(render(results, cores) + "\n")
    print(f"wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
