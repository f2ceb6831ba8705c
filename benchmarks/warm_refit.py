"""What the CV estimators' warm refit buys (issue 38): the refit at the chosen C started from the
path's cuts (scaled by ``n_train / n_all``) and the chosen ``w``, against a cold refit.

The same ``SequenceTaggerCV`` fit twice, one after the other in one process: with
``WARM_REFIT = True`` (the default) and with a subclass that sets it False (a cold refit). Both
paths are identical (same features, fitted on all the training sentences when a refit follows;
same grid, same held-out sentences), so the two refits solve the same problem: their certified
objectives must agree within the two gaps. Reported: the refit's iterations and seconds, its
status and certificate, and the whole fit's seconds.

Writes ``docs/results/warm_refit.md`` (and ``--json``) from the run, the command at the top.

Run: ``python -m benchmarks.warm_refit [--n-sentences 3000] [--Cs 1000 10000]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from benchmarks._run_record import load_average, run_meta, write_page

ROOT = Path(__file__).resolve().parent.parent


def run(args) -> list:
    """The two fits: a list of two records (warm, cold)."""
    from problems import SequenceTaggerCV
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll
    from problems.sequence.templates import CHUNKING_TEMPLATES

    class ColdRefit(SequenceTaggerCV):
        WARM_REFIT = False

    path = dataset_path("conll2000-chunking", "train.txt.gz") if args.data is None else Path(args.data)
    corpus = read_conll(path, n_columns=3)
    X, y = corpus.inputs[: args.n_sentences], corpus.labels[: args.n_sentences]
    records = []
    for name, cls in (("warm", SequenceTaggerCV), ("cold", ColdRefit)):
        t0 = time.perf_counter()
        est = cls(templates=CHUNKING_TEMPLATES, Cs=tuple(args.Cs), extend=0).fit(X, y)
        total = time.perf_counter() - t0
        res, C = est.result_, float(est.C_)
        records.append(
            dict(
                refit=name,
                n_sentences=len(X),
                C=C,
                refit_warm=bool(est.validation_.get("refit_warm", False)),
                refit_iterations=int(res.n_iter),
                refit_seconds=float(est.validation_["refit_seconds"]),
                status=str(res.status),
                objective_F=float(res.objective) * C,
                lower_F=float(res.lower_bound) * C,
                eps_F=float(est.path_["eps"][est.best_index_]),
                path_iterations=int(sum(est.path_["n_iter"])),
                fit_seconds=total,
            )
        )
        print(records[-1], flush=True)
    return records


def agree(a, b) -> bool:
    """The two certified refits agree: objectives within the two gaps, each lower bound below
    the other's objective."""
    slack = 1e-9 * max(1.0, abs(a["objective_F"]))
    gaps = (a["objective_F"] - a["lower_F"]) + (b["objective_F"] - b["lower_F"])
    return (
        abs(a["objective_F"] - b["objective_F"]) <= gaps + slack
        and a["lower_F"] <= b["objective_F"] + slack
        and b["lower_F"] <= a["objective_F"] + slack
    )


def render(records, meta) -> str:
    """The markdown page."""
    warm, cold = records
    out = [
        "# The CV estimators' warm refit against a cold one (issue 38)",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Written by `benchmarks/warm_refit.py` (never by hand) on {meta['date']}; {meta['machine']}; load "
        f"average before the run {meta['load_before']}, after {meta['load_after']}.",
        "",
        f"Data: CoNLL-2000 chunking train, first {warm['n_sentences']} sentences, CRF++ chunking templates; "
        f"`SequenceTaggerCV(Cs={tuple(meta['Cs'])}, extend=0)` with its defaults (MTL^struct, 10% held out, "
        "refit on all). The same fit twice, one after the other: the refit warm from the path's cuts (scaled by "
        "`n_train / n_all`) and the chosen `w` (the default), then cold (`WARM_REFIT = False`).",
        "",
        "| refit | chosen C | refit iterations | refit s | status | F | lower bound | eps | path iterations | fit s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        out.append(
            f"| {r['refit']} | {r['C']:g} | {r['refit_iterations']} | {r['refit_seconds']:.1f} | {r['status']} | "
            f"{r['objective_F']:.6g} | {r['lower_F']:.6g} | {r['eps_F']:.3g} | {r['path_iterations']} | "
            f"{r['fit_seconds']:.1f} |"
        )
    ratio_it = warm["refit_iterations"] / max(cold["refit_iterations"], 1)
    ratio_s = warm["refit_seconds"] / max(cold["refit_seconds"], 1e-9)
    out += [
        "",
        f"Warm against cold: {ratio_it:.2f}x the refit's iterations, {ratio_s:.2f}x its seconds; the two certified "
        f"refits {'agree' if agree(warm, cold) else 'DO NOT AGREE'} (objectives within the two gaps, each lower "
        "bound below the other's objective).",
        "",
    ]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.warm_refit", description=__doc__.split("\n")[0])
    ap.add_argument("--n-sentences", type=int, default=3000, dest="n_sentences")
    ap.add_argument("--data", default=None, help="a CoNLL file (word, POS, chunk) instead of CoNLL-2000 train")
    ap.add_argument("--Cs", type=float, nargs="+", default=[1000.0, 10000.0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "warm_refit.md"))
    ap.add_argument("--json", default=str(ROOT / "docs" / "results" / "warm_refit.json"))
    args = ap.parse_args(argv)
    load_before = load_average()
    records = run(args)
    meta = run_meta("python -m benchmarks.warm_refit", argv, load_before, Cs=args.Cs)
    write_page(render(records, meta), args.out, args.json, meta, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
