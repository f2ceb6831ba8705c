"""A/B of the cut ``R(w) >= 0`` in BMRM with the L2 regulariser (the 1-slack SSVM) on Spanish NER.

The engine adds the cut ``R >= risk_lower_bound`` by default only for regularisers whose
``risk_floor_cut`` is True; ``L2`` says False since session 6, after the cut slowed BMRM 1.6-2.6x on
Chinese word segmentation. This script runs the same oracle (the first ``n`` sentences of
``esp.train`` with the 134 templates, features seen at least twice) with and without the cut,
for the same number of iterations (no eps reached), and prints the best upper bound and the
lower bound on ``F = Omega + C R`` at a few iterations, and the wall time.

Usage: ``python benchmarks/risk_floor_ab.py [N_SENTENCES] [C] [ITERATIONS]`` (default 2000 10000 400).
"""
from __future__ import annotations

import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cutplane import minimize  # noqa: E402
from cutplane.regularizers import L2  # noqa: E402


def main(argv=None):
    from problems import SequenceTagger
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll
    from problems.template_sets import NER134

    args = sys.argv[1:] if argv is None else argv
    n, C, iters = (int(args[0]) if args else 2000, float(args[1]) if len(args) > 1 else 1e4,
                   int(args[2]) if len(args) > 2 else 400)
    data = read_conll(dataset_path("conll2002-ner-es", "esp.train.gz"))
    oracle = SequenceTagger(NER134, executor="threads", min_count=2).make_oracle(data.inputs[:n], data.labels[:n])
    for floor in (None, 0.0):
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = minimize(oracle, L2(), 1.0 / C, eps=1e-12, max_iter=iters, prune_after=10, risk_lower_bound=floor)
        h = res.history
        marks = [k for k in (50, 100, 200, 400, 800, 1600) if k <= len(h.gap)]
        print(f"n={n} C={C:g} R>=0 cut: {'yes' if floor is not None else 'no (L2 default)'}: " + "; ".join(
            f"it {k}: upper {C * h.best_upper[k - 1]:.4g} lower {C * h.lower[k - 1]:.4g}" for k in marks)
            + f"; {time.perf_counter() - t:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
