"""Per-iteration overhead of the engine: reduced QP solves through cvxpy, side by side.

For working sets of n cuts (default 10, 50, 100, 200) in dimension d, times one reduced solve
of the L2 dual QP with each formulation of :class:`cutplane.reduced.qp.QPReducedSolver`:

- ``dpp``: parametrised problem compiled once per capacity bucket, parameters substituted;
- ``direct``: a fresh ``quad_form(alpha, psd_wrap(G))`` problem per solve;

and, as the floor, the backend's own solve time reported by cvxpy (``solver_stats``); then the
native active-set solver (``ACTIVESET``, the default backend since issue 5) on the same working
sets, with its lower bound against the cvxpy one. Then a
full BMRM run on a random hinge problem splits wall time into oracle / reduced solver /
engine bookkeeping (everything else: working set, Gram rows, checks).

Usage: ``python benchmarks/engine_overhead.py [--dim 500] [--sizes 10 50 200] [--repeat 5]``
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cutplane import minimize  # noqa: E402
from cutplane.cuts import Cut, OracleResult  # noqa: E402
from cutplane.reduced.qp import QPReducedSolver  # noqa: E402
from cutplane.regularizers import L2  # noqa: E402
from cutplane.working_set import WorkingSet  # noqa: E402


def working_set(n, dim, rng):
    ws = WorkingSet(dim)
    for _ in range(n):
        ws.add(Cut(rng.standard_normal(dim) / np.sqrt(dim), float(rng.random())))
    return ws


def time_solves(solver, ws, lam, repeat):
    solver.solve(ws, lam)  # compile / warm caches
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sol = solver.solve(ws, lam)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), sol


def backend_time(ws, lam, backend):
    """The backend's own solve time for the direct problem (cvxpy's solver_stats)."""
    import cvxpy as cp

    G = ws.gram()
    alpha = cp.Variable(ws.n_cuts, nonneg=True)
    prob = cp.Problem(cp.Maximize(ws.offsets @ alpha - 0.5 / lam * cp.quad_form(alpha, cp.psd_wrap(G))),
                      [cp.sum(alpha) == 1])
    prob.solve(solver=backend)
    return float(prob.solver_stats.solve_time or np.nan)


class Hinge:
    def __init__(self, X, y):
        self.X, self.y, self.dim = X, y, X.shape[1]

    def __call__(self, w):
        m = 1.0 - self.y * (self.X @ w)
        act = m > 0
        val = float(np.maximum(m, 0).mean())
        a = -(self.y[act, None] * self.X[act]).sum(axis=0) / len(self.y)
        return OracleResult(val, Cut(a, val - float(a @ w)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dim", type=int, default=500)
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100, 200])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--backends", nargs="+", default=["CLARABEL", "ECOS"])
    p.add_argument("--lam", type=float, default=1e-2)
    p.add_argument("--n-train", type=int, default=5000)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)

    print(f"reduced L2 QP solve, dim={args.dim}, lam={args.lam}, median of {args.repeat} (ms)")
    print(f"{'backend':>9} {'cuts':>5} {'dpp':>8} {'direct':>8} {'backend':>8} {'dpp/direct':>10} {'|dLB|':>9}")
    for backend in args.backends:
        for n in args.sizes:
            ws = working_set(n, args.dim, rng)
            t_dpp, s_dpp = time_solves(QPReducedSolver(L2(), backend, formulation="dpp"), ws, args.lam, args.repeat)
            t_dir, s_dir = time_solves(QPReducedSolver(L2(), backend, formulation="direct"), ws, args.lam,
                                       args.repeat)
            t_bk = backend_time(ws, args.lam, backend)
            print(f"{backend:>9} {n:>5} {1e3 * t_dpp:8.2f} {1e3 * t_dir:8.2f} {1e3 * t_bk:8.2f} "
                  f"{t_dpp / t_dir:10.2f} {abs(s_dpp.lower_bound - s_dir.lower_bound):9.1e}")

    print(f"\nnative ACTIVESET (cold start, no warm duals) vs cvxpy direct on {args.backends[0]}, median (ms)")
    print(f"{'cuts':>5} {'native':>8} {'direct':>8} {'direct/native':>13} {'LB native - LB cvxpy':>21}")
    for n in args.sizes:
        ws = working_set(n, args.dim, rng)
        t_nat, s_nat = time_solves(QPReducedSolver(L2(), "ACTIVESET"), ws, args.lam, args.repeat)
        t_dir, s_dir = time_solves(QPReducedSolver(L2(), args.backends[0], formulation="direct"), ws, args.lam,
                                   args.repeat)
        print(f"{n:>5} {1e3 * t_nat:8.2f} {1e3 * t_dir:8.2f} {t_dir / t_nat:13.1f} "
              f"{s_nat.lower_bound - s_dir.lower_bound:21.1e}")

    X = rng.standard_normal((args.n_train, 50)) / np.sqrt(50)
    y = np.sign(X @ rng.standard_normal(50) + 0.3 * rng.standard_normal(args.n_train))
    print(f"\nBMRM on a {args.n_train} x 50 hinge problem (lam={args.lam}, eps=1e-4), time split:")
    print(f"{'formulation':>11} {'iters':>6} {'total s':>8} {'oracle s':>8} {'solver s':>8} {'engine s':>8} "
          f"{'solver ms/it':>12} {'engine ms/it':>12}")
    for formulation in ("native", "auto", "dpp", "direct"):
        reg = L2()
        if formulation == "native":
            reg.make_reduced_solver = lambda backends=None: QPReducedSolver(reg, "ACTIVESET")
        else:
            reg.make_reduced_solver = (lambda backends=None, f=formulation:
                                       QPReducedSolver(reg, args.backends, formulation=f))
        res = minimize(Hinge(X, y), reg, args.lam, eps=1e-4, max_iter=1000)
        engine = res.time_s - res.oracle_time_s - res.solver_time_s
        print(f"{formulation:>11} {res.n_iter:>6} {res.time_s:8.3f} {res.oracle_time_s:8.3f} "
              f"{res.solver_time_s:8.3f} {engine:8.3f} {1e3 * res.solver_time_s / res.n_iter:12.2f} "
              f"{1e3 * engine / res.n_iter:12.2f}")


if __name__ == "__main__":
    main()
