"""MTL^struct's reduced QCQP: the native interior point against Clarabel's direct API.

Rows (timed in the same run, one BLAS thread as in the engine, the minimum of ``--repeat``
calls for the native solver and of ``--repeat-direct`` for Clarabel):

- random engine-like instances: ``n`` sparse cuts over ``40 m`` coordinates split into ``m``
  groups (coordinate runs), ``Q^j = A_j A_j^T``, offsets uniform in [0, 5), ``lam = 1e-3``,
  for ``n`` in 20/50/86/150/200 and ``m = |W|`` in 4/12/22;
- the recorded CoNLL-2000 instance ``tests/fixtures/qcqp_conll2000_86cuts.npz`` (or ``--recorded PATH``)
  when present: cold, and warm-started from the engine's previous ``alpha``.

``direct`` is :func:`cutplane.reduced.qcqp.direct.solve_qcqp_direct` with the eigen-factors
``psd_factor(Q^j)`` it needs (the factorisations are timed with it, as the engine pays them;
``clarabel`` alone is shown too). Accuracy columns: the objective at each solver's ``alpha``
(``b^T alpha - max_j q_j(alpha)``, the engine's lower bound), their difference relative to the
size of the terms (positive: native higher), the largest ``|alpha_native - alpha_direct|``,
and the native solver's certified relative gap.

Then group generation (``QCQPReducedSolver(native_generation=...)``) on engine-like sequences:
cuts added one at a time to a working set of ``m`` groups of which about 20% carry most of
the slopes (the rest small: the templates MTL^struct drops), each solve warm-started from the
previous ``alpha``; total CPU seconds of the reduced solves with every group in each solve
against lazily generated groups, and the largest difference of their lower bounds.

Usage: ``python -m benchmarks.qcqp_native [--repeat 3] [--repeat-direct 1] [--quick]``;
prints a table, writes nothing.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchmarks._timing import best_of
from cutplane._blas import single_thread_blas
from cutplane.reduced.qcqp.direct import solve_qcqp_direct
from cutplane.reduced.qcqp.native import solve_qcqp_native
from cutplane.reduced.qp import psd_factor

RECORDED = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fixtures", "qcqp_conll2000_86cuts.npz"
)


def random_instance(n, m, seed, lam=1e-3):
    rng = np.random.default_rng(seed)
    dim = 40 * m
    A = rng.standard_normal((n, dim)) * (rng.random((n, dim)) < 0.1)
    bounds = np.sort(rng.choice(np.arange(1, dim), m - 1, replace=False))
    grams = [A[:, g] @ A[:, g].T for g in np.split(np.arange(dim), bounds)]
    return grams, rng.random(n) * 5.0, lam


def objective(grams, b, lam, alpha):
    q = max(float(alpha @ Q @ alpha) for Q in grams) / (2.0 * lam)
    return float(b @ alpha) - q, max(abs(float(b @ alpha)), q)


def row(name, grams, b, lam, alpha0, repeat, repeat_direct):
    with single_thread_blas():
        t_nat, res = best_of(lambda: solve_qcqp_native(grams, b, lam, alpha0=alpha0), repeat)
        t_fac, factors = best_of(lambda: [psd_factor(Q) for Q in grams], repeat_direct)
        t_cla, out = best_of(lambda: solve_qcqp_direct(factors, b, lam), repeat_direct)
    t_dir = t_fac + t_cla
    if out is None:
        print(f"{name:<28} native {1e3 * t_nat:9.2f} ms  direct failed")
        return
    a_dir = np.clip(out[0], 0.0, None)
    a_dir /= a_dir.sum()
    v_nat, size = objective(grams, b, lam, res.alpha)
    v_dir, _ = objective(grams, b, lam, a_dir)
    print(
        f"{name:<28} {1e3 * t_nat:9.2f} {res.n_iter:4d} {1e3 * t_dir:10.1f} {1e3 * t_cla:10.1f} "
        f"{t_dir / t_nat:8.0f}x {(v_nat - v_dir) / size:+10.1e} {np.abs(res.alpha - a_dir).max():9.1e} "
        f"{res.gap / size:9.1e}"
    )


def generation_row(m, n, seed):
    """Reduced-solver CPU time over a growing working set, all groups vs generated groups."""
    import scipy.sparse as sp

    from cutplane.cuts import Cut
    from cutplane.reduced.qcqp import QCQPReducedSolver
    from cutplane.regularizers import MixedNorm
    from cutplane.working_set import WorkingSet

    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(m), 20)
    heavy = np.where(rng.random(m) < 0.2, 1.0, 0.05)[groups]
    A = rng.standard_normal((n, groups.size)) * heavy * (rng.random((n, groups.size)) < 0.3)
    b = rng.uniform(0.0, 2.0, n)
    reg = MixedNorm(groups, p=1.0, n_groups=m)
    times, lowers, binding = {}, {}, 0
    for generate in (False, True):
        solver = QCQPReducedSolver(reg, native_generation=generate)
        ws, alpha, total, low = WorkingSet(groups.size, groups=groups), None, 0.0, []
        for r in range(n):
            ws.add(Cut(sp.csr_matrix(A[r][None, :]), float(b[r])))
            warm = None if alpha is None else np.append(alpha, 0.0)
            with single_thread_blas():
                t0 = time.process_time()
                sol = solver.solve(ws, 1e-2, warm_start=warm)
                total += time.process_time() - t0
            alpha = sol.alpha
            low.append(sol.lower_bound)
        times[generate], lowers[generate] = total, np.array(low)
        binding = int(np.count_nonzero(sol.mu > 1e-9))
    diff = float(np.max(np.abs(lowers[True] - lowers[False]) / np.maximum(1.0, np.abs(lowers[False]))))
    print(
        f"{'groups m=' + str(m) + ' cuts 1..' + str(n):<28} {times[False]:10.2f} {times[True]:10.2f} "
        f"{times[False] / times[True]:7.1f}x {binding:8d} {diff:10.1e}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--repeat-direct", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--recorded", default=RECORDED)
    parser.add_argument("--quick", action="store_true", help="n in 20/86 and |W| in 4/12 only")
    args = parser.parse_args()
    sizes = [20, 86] if args.quick else [20, 50, 86, 150, 200]
    groups = [4, 12] if args.quick else [4, 12, 22]
    print(
        f"{'instance':<28} {'native ms':>9} {'it':>4} {'direct ms':>10} {'clarabel':>10} {'ratio':>9} "
        f"{'dvalue':>10} {'dalpha':>9} {'nat gap':>9}"
    )
    for m in groups:
        for n in sizes:
            grams, b, lam = random_instance(n, m, args.seed + 1000 * m + n)
            row(f"random n={n} |W|={m}", grams, b, lam, None, args.repeat, args.repeat_direct)
    if os.path.exists(args.recorded):
        with np.load(args.recorded) as f:  # Gram blocks as upper triangles (tests/fixtures)
            upper, b, lam, warm = f["gram_upper"], f["b"], float(f["lam"]), f["warm"]
        iu = np.triu_indices(len(b))
        grams = np.zeros((len(upper), len(b), len(b)))
        grams[:, iu[0], iu[1]] = upper
        grams[:, iu[1], iu[0]] = upper
        label = f"recorded n={len(b)} |W|={len(grams)}"
        row(label + " cold", list(grams), b, lam, None, args.repeat, args.repeat_direct)
        row(label + " warm", list(grams), b, lam, warm, args.repeat, args.repeat_direct)
    else:
        print(f"(recorded instance {args.recorded} absent)")
    print()
    print(f"{'growing working set':<28} {'all s':>10} {'generate s':>10} {'ratio':>8} {'binding':>8} {'dlower':>10}")
    for m, n in [(22, 60), (134, 60)] if args.quick else [(22, 150), (134, 150), (134, 300)]:
        generation_row(m, n, args.seed + m + n)


if __name__ == "__main__":
    main()
