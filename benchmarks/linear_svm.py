"""BMRM versus liblinear (scikit-learn LinearSVC) on a dense binary linear SVM.

Problem (issue 2): ``rng = np.random.default_rng(seed)`` (777), ``X`` standard normal / sqrt(d),
``y = sign(X @ w* + 0.3 * noise)``, no bias, hinge loss. For each liblinear ``C_lib`` the
package's ``C = C_lib * n`` gives the same minimiser, and every objective below is on one
scale, ``F(w) = 1/2 ||w||^2 + C_lib * sum_i hinge_i = 1/2 ||w||^2 + C * mean hinge``.

Each method returns a trace of (seconds, objective). The reference ``F*`` is the smallest
final objective of all methods; a method's *time to target* is the first time its objective
is within ``--rel`` (1e-4) of ``F*``. For LinearSVC the trace comes from reruns at
tolerances 1e-1, 1e-2, ..., 1e-8 (each timed from scratch); for BMRM from the engine's
per-iteration callback. The ratio printed is BMRM / LinearSVC time to target.

Add a method: write ``run_xxx(X, y, C_lib, args) -> Run`` and put it in ``METHODS``.

Run: ``python benchmarks/linear_svm.py`` (full size) or ``--n 3000 --d 100`` (quick).
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class Run(NamedTuple):
    """One method's outcome: final objective, total seconds and its (seconds, objective) trace."""

    name: str
    objective: float
    time_s: float
    trace: list  # (seconds, objective) pairs
    note: str = ""


def make_problem(n, d, seed):
    """The benchmark data: X (n, d) dense, y in {-1, +1}."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    w_star = rng.standard_normal(d)
    y = np.sign(X @ w_star + 0.3 * rng.standard_normal(n))
    y[y == 0] = 1.0
    return X, y


def objective(w, X, y, C_lib):
    """``1/2 ||w||^2 + C_lib * sum_i max(0, 1 - y_i <x_i, w>)``."""
    return 0.5 * float(w @ w) + C_lib * float(np.maximum(0.0, 1.0 - y * (X @ w)).sum())


def run_linearsvc(X, y, C_lib, args):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    trace, total = [], 0.0
    for tol in [10.0 ** -k for k in range(1, 9)]:
        clf = LinearSVC(C=C_lib, loss="hinge", fit_intercept=False, dual=True, tol=tol,
                        max_iter=args.liblinear_max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.perf_counter()
            clf.fit(X, y)
            elapsed = time.perf_counter() - t0
        trace.append((elapsed, objective(clf.coef_.ravel(), X, y, C_lib)))
        total = elapsed
    return Run("LinearSVC(tol=1e-8)", trace[-1][1], total, trace, f"n_iter={clf.n_iter_}")


def run_bmrm(X, y, C_lib, args, method="bmrm"):
    import cutplane
    from cutplane.regularizers import L2
    from oracles.linear import BinaryHinge

    n = X.shape[0]
    C = C_lib * n
    oracle = BinaryHinge(X, y)
    trace = []
    t0 = time.perf_counter()

    def callback(info):
        trace.append((time.perf_counter() - t0, C * info.best_upper))  # F = C * F_engine

    # The engine minimises F / C; args.bmrm_eps is on that scale (C * eps on the scale of F).
    res = cutplane.minimize(oracle, L2(), 1.0 / C, method=method, eps=args.bmrm_eps,
                            max_iter=args.max_iter, callback=callback)
    elapsed = time.perf_counter() - t0
    F = objective(res.w, X, y, C_lib)
    trace.append((elapsed, F))  # the engine does not call back on the converged iteration
    return Run(method.upper(), F, elapsed, trace,
               f"iters={res.n_iter} status={res.status} gap_F={C * res.gap:.2e} "
               f"oracle={res.oracle_time_s:.2f}s solver={res.solver_time_s:.2f}s "
               f"backend={res.backend}")


METHODS = {"linearsvc": run_linearsvc, "bmrm": run_bmrm}


def time_to_target(run, target):
    """Earliest time in the trace at which the objective is <= target (nan if never).

    For the LinearSVC reruns (independent runs) this is the fastest run that reached it."""
    times = [t for t, f in run.trace if f <= target]
    return min(times) if times else float("nan")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--d", type=int, default=500)
    p.add_argument("--seed", type=int, default=777)
    p.add_argument("--C-lib", type=float, nargs="+", default=[0.01, 1.0], dest="C_lib")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--rel", type=float, default=1e-4, help="relative target (default 1e-4)")
    p.add_argument("--bmrm-eps", type=float, default=1e-6, dest="bmrm_eps",
                   help="engine eps, on the engine scale F/C (default 1e-6)")
    p.add_argument("--max-iter", type=int, default=2000, dest="max_iter")
    p.add_argument("--liblinear-max-iter", type=int, default=1_000_000, dest="liblinear_max_iter")
    args = p.parse_args(argv)

    # One-time costs (imports, cvxpy backend probing) are paid here, outside the timings.
    t0 = time.perf_counter()
    Xw, yw = make_problem(200, 5, 0)
    for m in args.methods:
        METHODS[m](Xw, yw, 0.1, args)
    print(f"warm-up (imports, backend probing; not in the timings): {time.perf_counter() - t0:.2f} s")
    X, y = make_problem(args.n, args.d, args.seed)
    print(f"problem: n={args.n} d={args.d} seed={args.seed}; F = 1/2||w||^2 + C_lib * sum hinge")
    for C_lib in args.C_lib:
        runs = [METHODS[m](X, y, C_lib, args) for m in args.methods]
        F_ref = min(r.objective for r in runs)
        target = F_ref * (1.0 + args.rel)
        print(f"\nC_lib = {C_lib:g} (ours C = {C_lib * args.n:g}); F* = {F_ref:.8g}; "
              f"target F* (1 + {args.rel:g})")
        print(f"{'method':22s} {'objective':>16s} {'rel. diff':>10s} {'time_s':>8s} "
              f"{'to_target_s':>11s}  notes")
        ttt = {}
        for r in runs:
            ttt[r.name] = time_to_target(r, target)
            print(f"{r.name:22s} {r.objective:16.8f} {(r.objective - F_ref) / F_ref:10.2e} "
                  f"{r.time_s:8.2f} {ttt[r.name]:11.2f}  {r.note}")
        names = [r.name for r in runs]
        if "BMRM" in names and any(n.startswith("LinearSVC") for n in names):
            lin = next(n for n in names if n.startswith("LinearSVC"))
            total = runs[names.index("BMRM")].time_s / runs[names.index(lin)].time_s
            print(f"wall-time ratio BMRM / LinearSVC to target: {ttt['BMRM'] / ttt[lin]:.2f}x "
                  f"(total-time ratio {total:.2f}x)")


if __name__ == "__main__":
    main()
