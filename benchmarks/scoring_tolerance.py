"""The scoring points of a path at a relative gap (issue 38): what they cost, what C they choose.

A CV estimator that refits at the chosen C (the plain command's ``--C auto``: 10% held out, then
the refit on all the training data) only needs the scoring points of its path precise enough to
choose C; the refit certifies the model to its ``eps``. This script trains ``SequenceTaggerCV``
with the plain command's defaults (CRF++ chunking templates, ``Cs="auto"``, the held-out fraction,
the refit, the oracle on threads) twice, one arm after the other in one process:

- ``full``: every scoring point to its ``eps`` (``SCORING_RTOL = None``, the behaviour before);
- ``scoring rtol``: the scoring points stop at the relative gap ``SCORING_RTOL`` (the default).

and writes, per arm, the path (iterations, seconds, validation score, gap and the tolerance each
point reached), the chosen C, the refit, the test chunk F1, to ``docs/results/scoring_tolerance.md``
(``--json`` keeps the records; ``--render JSON`` rewrites the page from them).

Run: ``python -m benchmarks.scoring_tolerance`` (``--max-sentences N`` for a short run).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import date
from pathlib import Path

__all__ = ["main", "run_arm", "render"]

PAGE = Path(__file__).resolve().parents[1] / "docs" / "results" / "scoring_tolerance.md"


def _data(max_sentences):
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll

    train = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"))
    test = read_conll(dataset_path("conll2000-chunking", "test.txt.gz"))
    n = max_sentences or len(train.inputs)
    m = max_sentences or len(test.inputs)  # a short run scores on as many test sentences
    return train.inputs[:n], train.labels[:n], test.inputs[:m], test.labels[:m]


def run_arm(name: str, scoring_rtol, X, y, X_test, y_test) -> dict:
    """One arm: ``SequenceTaggerCV`` with the plain command's defaults and ``SCORING_RTOL``."""
    from problems import SequenceTaggerCV
    from problems.metrics import chunk_f1
    from problems.sequence.template_sets import CHUNKING
    from problems.solvers import CuttingPlane

    cls = type("SequenceTaggerCV", (SequenceTaggerCV,), {"SCORING_RTOL": scoring_rtol})
    est = cls(CHUNKING, solver=CuttingPlane(executor="threads"), extend=0)
    t0 = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - t0
    path = est.path_
    return dict(
        arm=name,
        scoring_rtol=scoring_rtol,
        C=path["C"],
        n_iter=path["n_iter"],
        seconds=path["seconds"],
        validation_score=path["validation_score"],
        gap=path["gap"],
        eps=path["eps"],
        tolerance=path["tolerance"],
        status=path["status"],
        chosen_C=est.C_,
        refit_iterations=int(est.n_iter_),
        refit_status=str(est.result_.status),
        refit_gap=float(est.gap_),
        refit_seconds=float(est.validation_.get("refit_seconds", float("nan"))),
        fit_seconds=seconds,
        test_f1=float(chunk_f1(y_test, est.predict(X_test)).f1),
        test_accuracy=100.0 * float(est.score(X_test, y_test)),
    )


def render(meta: dict, arms: list) -> str:
    """The page, from the records."""
    lines = [
        "# The scoring points of a path at a relative gap (issue 38)",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Written by `benchmarks/scoring_tolerance.py` (never by hand) on {meta['date']}; {meta['machine']}. "
        f"Data: {meta['data']}. Both arms in one process, one after the other (a shared machine: seconds are noisy, "
        "iterations are not).",
        "",
        '`SequenceTaggerCV` with the plain command\'s defaults (CRF++ chunking templates, `Cs="auto"`, 10% held '
        "out, refit on all the training data at the chosen C, the oracle on threads, no grid extension). Arm "
        "`full`: every scoring point to its `eps` (0.01 C on F). Arm `scoring rtol`: the scoring points stop at "
        "the relative gap `SCORING_RTOL` (or `eps` if larger); the refit is certified to `eps` in both.",
        "",
        "| arm | path iterations | path seconds | chosen C | refit iterations (status, gap) | fit seconds | test chunk F1 "
        "| test token accuracy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for a in arms:
        lines.append(
            f"| {a['arm']} | {sum(a['n_iter'])} ({' / '.join(str(i) for i in a['n_iter'])}) | "
            f"{sum(a['seconds']):.1f} | {a['chosen_C']:g} | {a['refit_iterations']} ({a['refit_status']}, "
            f"{a['refit_gap']:.3g}) | {a['fit_seconds']:.1f} | {a['test_f1']:.2f} | {a['test_accuracy']:.2f} |"
        )
    for a in arms:
        lines += [
            "",
            f"Path of arm `{a['arm']}`:",
            "",
            "| C | validation chunk F1 | iterations | seconds | gap | eps | tolerance to reach | status |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in zip(
            a["C"], a["validation_score"], a["n_iter"], a["seconds"], a["gap"], a["eps"], a["tolerance"], a["status"]
        ):
            C, score, it, sec, gap, eps, tol, status = row
            lines.append(
                f"| {C:g} | {100 * score:.2f} | {it} | {sec:.1f} | {gap:.3g} | {eps:.3g} | {tol:.3g} | {status} |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    from problems.template_learning import TemplateLearnerCVMixin

    ap = argparse.ArgumentParser(prog="python -m benchmarks.scoring_tolerance", description=__doc__.splitlines()[0])
    ap.add_argument("--max-sentences", type=int, default=None, help="the first N training (and test) sentences")
    ap.add_argument("--out", type=Path, default=PAGE)
    ap.add_argument("--json", type=Path, default=None, help="also write the records as JSON")
    ap.add_argument("--render", type=Path, default=None, help="only rewrite the page --out from this script's --json")
    args = ap.parse_args(argv)
    if args.render is not None:
        saved = json.loads(args.render.read_text())
        args.out.write_text(render(saved["meta"], saved["arms"]))
        return 0
    X, y, X_test, y_test = _data(args.max_sentences)
    arms = [
        run_arm("full", None, X, y, X_test, y_test),
        run_arm("scoring rtol", TemplateLearnerCVMixin.SCORING_RTOL, X, y, X_test, y_test),
    ]
    meta = dict(
        command="python -m benchmarks.scoring_tolerance"
        + ("" if args.max_sentences is None else f" --max-sentences {args.max_sentences}"),
        date=str(date.today()),
        machine=f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
        data=f"CoNLL-2000 chunking, {len(X)} training sentences, {len(X_test)} test sentences",
    )
    args.out.write_text(render(meta, arms))
    if args.json is not None:
        args.json.write_text(json.dumps(dict(meta=meta, arms=arms), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
