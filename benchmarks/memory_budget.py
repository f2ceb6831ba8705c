"""Working-set memory against the number of cuts, with and without ``memory_limit``, side by side.

BMRM on a sparse binary hinge problem (:class:`oracles.linear.BinaryHinge`, a CSR matrix of
``--n`` examples in ``--dim`` dimensions with ``--density`` nonzeros) runs for a growing number
of iterations with pruning off, so the unbudgeted working set holds one cut per iteration. The
same runs with ``memory_limit`` aggregate the oldest cuts instead. For each iteration count the
table gives the peak working-set bytes (:attr:`cutplane.Result.peak_working_set_bytes`), the
cuts held at the end, the objective and lower bound reached, and the wall time of both runs with
their ratio. With a budget the peak must stay flat at ``memory_limit`` plus at most one cut.

Usage: ``python -m benchmarks.memory_budget [--n 5000] [--dim 20000] [--density 0.002]
[--iters 25 50 100 200] [--limit 4M] [--out docs/results/memory_budget.md]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from cutplane import minimize
from cutplane.exceptions import ConvergenceWarning
from cutplane.regularizers import L2
from oracles.linear import BinaryHinge
from problems.cli.main import byte_size


def make_problem(n, dim, density, seed):
    """A sparse linearly separable-ish binary problem: labels from a sparse teacher, 10% flipped."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, dim, density=density, format="csr", random_state=rng, data_rvs=rng.standard_normal)
    teacher = rng.standard_normal(dim) * (rng.random(dim) < 0.1)
    y = np.sign(X @ teacher + 1e-9)
    y[y == 0] = 1.0
    flip = rng.random(n) < 0.1
    y[flip] = -y[flip]
    return X, y


def run(X, y, lam, iters, limit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        res = minimize(BinaryHinge(X, y), L2(), lam, eps=1e-12, max_iter=iters, prune_after=None, memory_limit=limit)
        return res, time.perf_counter() - t0


def mib(b):
    return f"{b / 2**20:.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--dim", type=int, default=20000)
    ap.add_argument("--density", type=float, default=0.002)
    ap.add_argument("--lam", type=float, default=1e-3)
    ap.add_argument("--iters", type=int, nargs="+", default=[25, 50, 100, 200])
    ap.add_argument("--limit", type=byte_size, default=byte_size("4M"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join("docs", "results", "memory_budget.md"))
    args = ap.parse_args(argv)
    X, y = make_problem(args.n, args.dim, args.density, args.seed)
    rows = []
    print("iterations, cuts and peak MiB without / with the budget, ok, objectives, lower bounds, times, ratio")  # noqa: T201
    for iters in args.iters:
        free, t_free = run(X, y, args.lam, iters, None)
        lim, t_lim = run(X, y, args.lam, iters, args.limit)
        max_cut = 16 * int((X.getnnz(axis=0) > 0).sum()) + 24  # a slope touches at most these columns
        rows.append(
            (
                iters,
                free.history.n_cuts[-1],
                mib(free.peak_working_set_bytes),
                lim.history.n_cuts[-1],
                mib(lim.peak_working_set_bytes),
                lim.peak_working_set_bytes <= args.limit + max_cut,
                f"{free.objective:.6g}",
                f"{lim.objective:.6g}",
                f"{free.lower_bound:.6g}",
                f"{lim.lower_bound:.6g}",
                f"{t_free:.2f}",
                f"{t_lim:.2f}",
                f"{t_lim / t_free:.2f}",
            )
        )
        print(*rows[-1], sep="\t", flush=True)  # noqa: T201 - a benchmark script reports on stdout
    head = (
        "| iterations | cuts (no budget) | peak MiB (no budget) | cuts (budget) | peak MiB (budget) | "
        "peak <= limit + one cut | objective (no budget) | objective (budget) | lower (no budget) | "
        "lower (budget) | time s (no budget) | time s (budget) | time ratio |"
    )
    lines = [
        "# Working-set memory under a budget",
        "",
        f"Command: `python -m benchmarks.memory_budget {' '.join(sys.argv[1:] if argv is None else argv)}`; "
        f"run on {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores.",
        "",
        f"Written by `benchmarks/memory_budget.py` (BMRM, L2, lam = {args.lam:g}, sparse hinge problem: "
        f"n = {args.n}, dim = {args.dim}, density = {args.density:g}; pruning off; "
        f"memory_limit = {args.limit} bytes = {mib(args.limit)} MiB). Each iteration count is run twice in the "
        "same process, without and with the budget; eps = 1e-12 so every run uses all its iterations.",
        "",
        head,
        "|" + "---|" * (head.count("|") - 1),
        *("| " + " | ".join(str(c) for c in r) + " |" for r in rows),
        "",
        "Without a budget the peak grows with the number of cuts (one sparse slope per iteration plus the "
        "Gram matrix, quadratic in the cuts); with it the peak stays flat at the budget. The bounds column "
        "shows what the budget costs in progress per iteration (aggregated cuts are a coarser model).",
        "",
    ]
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
