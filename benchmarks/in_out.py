"""BMRM against the in-out rule (``method="in-out"``, issue 38) on CoNLL-2000 at the plain command's C.

The same ``SequenceTagger`` (CRF++ chunking templates, MTL^struct, its defaults: ``eps = 0.01 C``
on ``F``, ``max_iter`` 1000) fitted at each C with ``CuttingPlane(method="bmrm")`` and with
``CuttingPlane(method="in-out")`` (the default of the structured estimators), one after the other
in one process. Reported per run: iterations, status, the certified objective and gap, the seconds
of the fit, of the oracle and of the reduced solves, and the test chunk F1. The two certified runs
of a C must bracket each other (each lower bound below the other's objective).

Writes ``docs/results/in_out.md`` (and ``--json``) from the run, the command at the top.

Run: ``python -m benchmarks.in_out [--n-sentences 2000] [--Cs 1000 10000 100000]``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

from benchmarks._run_record import load_average, run_meta, write_page

ROOT = Path(__file__).resolve().parent.parent
METHODS = ("bmrm", "in-out")


def run(args) -> list:
    """One record per (C, method)."""
    from cutplane.exceptions import ConvergenceWarning
    from problems import SequenceTagger
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll
    from problems.metrics.chunking import chunk_f1
    from problems.sequence.templates import CHUNKING_TEMPLATES
    from problems.solvers import CuttingPlane

    train_path = dataset_path("conll2000-chunking", "train.txt.gz") if args.data is None else Path(args.data)
    test_path = dataset_path("conll2000-chunking", "test.txt.gz") if args.test is None else Path(args.test)
    train, test = read_conll(train_path, n_columns=3), read_conll(test_path, n_columns=3)
    X, y = train.inputs[: args.n_sentences], train.labels[: args.n_sentences]
    records = []
    for C in args.Cs:
        for method in METHODS:
            est = SequenceTagger(CHUNKING_TEMPLATES, C=float(C), solver=CuttingPlane(method=method))
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # a max_iter status is in the table
                est.fit(X, y)
            seconds = time.perf_counter() - t0
            res = est.result_
            records.append(
                dict(
                    C=float(C),
                    method=method,
                    n_sentences=len(X),
                    iterations=int(est.n_iter_),
                    status=str(res.status),
                    objective=float(est.objective_),
                    lower_bound=float(est.lower_bound_),
                    gap=float(est.gap_),
                    eps=float(est.path_["eps"][0]),
                    fit_s=seconds,
                    oracle_s=float(res.oracle_time_s),
                    solver_s=float(res.solver_time_s),
                    test_f1=float(chunk_f1(test.labels, est.predict(test.inputs)).f1),  # percent
                )
            )
            print(records[-1], flush=True)
    return records


def bracket(a, b) -> bool:
    """Each certified lower bound is below the other run's objective (round-off allowed)."""
    slack = 1e-9 * max(1.0, abs(a["objective"]), abs(b["objective"]))
    return a["lower_bound"] <= b["objective"] + slack and b["lower_bound"] <= a["objective"] + slack


def render(records, meta) -> str:
    """The markdown page."""
    out = [
        "# BMRM against the in-out rule on CoNLL-2000 (issue 38)",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Written by `benchmarks/in_out.py` (never by hand) on {meta['date']}; {meta['machine']}; load "
        f"average before the run {meta['load_before']}, after {meta['load_after']} (a shared machine: the "
        "iteration counts are the robust figure, the seconds are noisy).",
        "",
        f"Data: the first {records[0]['n_sentences']} sentences of CoNLL-2000 train, CRF++ chunking templates; "
        "`SequenceTagger(templates, C=C, solver=CuttingPlane(method=...))` with every other default (MTL^struct, "
        "feature cutoff 2, `eps = 0.01 C` on `F`, `max_iter` 1000); test chunk F1 on the whole CoNLL-2000 test "
        "set. `in-out` queries the oracle at `w^b + 0.1 (w_t - w^b)` and at the reduced minimiser `w_t` every "
        "10th iteration (`cutplane.steps.InOutStep`); `bmrm` always at `w_t`.",
        "",
        "| C | method | iterations | status | F | certified gap (eps) | fit s | oracle s | reduced s | test F1 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        out.append(
            f"| {r['C']:g} | {r['method']} | {r['iterations']} | {r['status']} | {r['objective']:.6g} | "
            f"{r['gap']:.3g} ({r['eps']:.3g}) | {r['fit_s']:.1f} | {r['oracle_s']:.1f} | {r['solver_s']:.1f} | "
            f"{r['test_f1']:.2f} |"
        )
    out += ["", "In-out against BMRM at each C:", ""]
    by = {(r["C"], r["method"]): r for r in records}
    for C in sorted({r["C"] for r in records}):
        a, b = by[(C, "in-out")], by[(C, "bmrm")]
        out.append(
            f"- C = {C:g}: {a['iterations'] / max(b['iterations'], 1):.2f}x the iterations, "
            f"{a['fit_s'] / max(b['fit_s'], 1e-9):.2f}x the seconds; the two certified runs "
            f"{'bracket each other' if bracket(a, b) else 'DO NOT bracket each other'}"
            + ("" if b["status"] == "converged" else f" (BMRM stopped at {b['status']})")
            + "."
        )
    out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.in_out", description=__doc__.split("\n")[0])
    ap.add_argument("--n-sentences", type=int, default=2000, dest="n_sentences")
    ap.add_argument("--Cs", type=float, nargs="+", default=[1000.0, 10000.0, 100000.0])
    ap.add_argument("--data", default=None, help="a CoNLL file (word, POS, chunk) instead of CoNLL-2000 train")
    ap.add_argument("--test", default=None, help="a CoNLL file instead of CoNLL-2000 test")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "in_out.md"))
    ap.add_argument("--json", default=str(ROOT / "docs" / "results" / "in_out.json"))
    args = ap.parse_args(argv)
    load_before = load_average()
    records = run(args)
    meta = run_meta("python -m benchmarks.in_out", argv, load_before)
    write_page(render(records, meta), args.out, args.json, meta, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
