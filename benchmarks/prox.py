"""Proximity operators and simplex projections: time per call, side by side with a reference.

Rows (each timed in the same run, best of ``--repeat`` calls (the machine is shared, the
minimum is the least noisy), and the maximum deviation
from the reference so the speed is for the same answer):

- ``prox_squared_l1`` (Alg. 2, sorting) vs bisection on the threshold ``theta`` of
  ``theta = tau * sum max(|v| - theta, 0)`` (100 vectorised halvings);
- ``project_simplex`` / ``project_capped_simplex`` (Duchi et al. sort) vs bisection on
  ``sum max(v - theta, 0) = z``;
- ``prox_group_l2q`` (vectorised safeguarded Newton over groups) vs a loop of scipy ``brentq``,
  one scalar root per group;
- ``prox_squared_group_lp`` (p = 1.5: Brent on the norm, Newton inside) vs a cvxpy/Clarabel
  solve of the defining problem on the group norms (small m only);
- ``prox_squared_group_l1`` at SPOM/MTL scale (dim = 10^6 coordinates in m = 134 groups) vs
  the floor of two passes over ``v`` (``np.abs`` + a scaled copy).

Usage: ``python -m benchmarks.prox [--repeat 5] [--seed 0]``
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from benchmarks._timing import best_of
from cutplane.prox import (
    project_capped_simplex,
    project_simplex,
    prox_group_l2q,
    prox_squared_group_l1,
    prox_squared_group_lp,
    prox_squared_l1,
)


def _timed(fn, repeat):
    return best_of(fn, repeat, warmup=True)


def bisect_sq_l1(v, tau):
    a = np.abs(v)
    lo, hi = 0.0, tau * a.sum()
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if mid < tau * np.maximum(a - mid, 0).sum():
            lo = mid
        else:
            hi = mid
    return np.sign(v) * np.maximum(a - 0.5 * (lo + hi), 0)


def bisect_simplex(v, z):
    lo, hi = v.min() - z, v.max()
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if np.maximum(v - mid, 0).sum() > z:
            lo = mid
        else:
            hi = mid
    return np.maximum(v - 0.5 * (lo + hi), 0)


def brentq_l2q(v, tau, ids, q):
    from scipy.optimize import brentq

    m = ids.max() + 1
    b0 = np.sqrt(np.bincount(ids, weights=v * v, minlength=m))
    b = np.array(
        [
            0.0 if x == 0 else brentq(lambda t: t - x + tau * q * t ** (q - 1), 0.0, x, xtol=1e-300, rtol=1e-15)
            for x in b0
        ]
    )
    return v * np.where(b0 > 0, b / np.where(b0 > 0, b0, 1), 0)[ids]


def cvxpy_sq_lp_on_norms(v, tau, ids, p):
    import cvxpy as cp

    m = ids.max() + 1
    b0 = np.sqrt(np.bincount(ids, weights=v * v, minlength=m))
    x = cp.Variable(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - b0) + tau * 0.5 * cp.square(cp.pnorm(x, p)))).solve(
            solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
        )
    return v * (x.value / b0)[ids]


def row(name, size, ours, ref, ref_name):
    (t_o, x_o), (t_r, x_r) = ours, ref
    dev = float(np.max(np.abs(x_o - x_r)) / max(1.0, np.max(np.abs(x_r))))
    print(f"{name:<26} {size:>10} {t_o * 1e3:>10.3f} {t_r * 1e3:>10.3f} {t_r / t_o:>8.1f}x  {dev:>9.1e}  {ref_name}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    R = args.repeat
    print(f"{'operator':<26} {'size':>10} {'ours ms':>10} {'ref ms':>10} {'ref/ours':>9}  {'max dev':>9}  reference")
    for n in (134, 10_000, 1_000_000):
        v = rng.standard_normal(n)
        row(
            "prox_squared_l1",
            n,
            _timed(lambda: prox_squared_l1(v, 0.01), R),
            _timed(lambda: bisect_sq_l1(v, 0.01), R),
            "bisection on theta",
        )
        row(
            "project_simplex",
            n,
            _timed(lambda: project_simplex(v, 1.0), R),
            _timed(lambda: bisect_simplex(v, 1.0), R),
            "bisection on theta",
        )
        row(
            "project_capped_simplex",
            n,
            _timed(lambda: project_capped_simplex(v, 5.0), R),
            _timed(lambda: bisect_simplex(v, 5.0), R),
            "bisection (sum active)",
        )
    for m in (134, 5_000):
        ids = rng.integers(0, m, size=20 * m)
        v = rng.standard_normal(ids.size)
        for q in (1.5, 3.0):
            row(
                f"prox_group_l2q q={q}",
                m,
                _timed(lambda: prox_group_l2q(v, 0.5, ids, q), R),
                _timed(lambda: brentq_l2q(v, 0.5, ids, q), max(1, R // 2)),
                "scipy brentq per group",
            )
    for m in (134, 1_000):
        ids = rng.integers(0, m, size=20 * m)
        v = rng.standard_normal(ids.size)
        row(
            "prox_squared_group_lp 1.5",
            m,
            _timed(lambda: prox_squared_group_lp(v, 0.05, ids, 1.5), R),
            _timed(lambda: cvxpy_sq_lp_on_norms(v, 0.05, ids, 1.5), 1),
            "cvxpy/Clarabel on norms",
        )
    ids = np.sort(rng.integers(0, 134, size=1_000_000))
    v = rng.standard_normal(ids.size)
    floor = _timed(lambda: np.abs(v) * 0.5, R)
    ours = _timed(lambda: prox_squared_group_l1(v, 0.01, ids), R)
    print(
        f"{'prox_squared_group_l1':<26} {'1e6 / 134':>10} {ours[0] * 1e3:>10.3f} {floor[0] * 1e3:>10.3f} "
        f"{floor[0] / ours[0]:>8.2f}x  {'-':>9}  floor: two passes over v"
    )


if __name__ == "__main__":
    main()
