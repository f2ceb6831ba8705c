"""Kelley's cutting-plane method on a 1-D convex function: the model growing cut by cut.

The chapter's Fig. 1.1(b) (seed 001, sec. 1.1, Alg. 1.2). On the interval ``X = [lo, hi]``, the
method keeps the cuts ``f(x_i) + f'(x_i) (x - x_i)`` taken at the points visited so far; their
maximum ``f_t`` is a piecewise-linear *under-estimator* of ``f`` that touches it at those points.
The next point is ``x_t = argmin_{x in X} f_t(x)`` (an LP), ``f_t(x_t)`` is a lower bound on
``min f`` and ``min_i f(x_i)`` an upper bound; the method stops when they are ``eps`` apart.

Here ``f(x) = exp(x) - 2 x + 0.5 |x - 1|`` (smooth except at x = 1) on ``X = [-1.5, 2]``, from
``x_0 = -1.5``, solved by :func:`cutplane.minimize` with ``method="kelley"`` and the indicator
``Box(-1.5, 2)``; :class:`oracles.function.FunctionOracle` turns ``f`` and its derivative into
the oracle. The cuts are recorded by a callback-like hook on the oracle (the engine's own
``callback`` is not called on the stopping iteration, whose cut we want in the figure too).

The figure ``OUT/kelley_1d.png`` has one panel per model ``f_1 .. f_5`` (the cuts so far, thin;
the model, thick; the next point and its lower bound) and the bounds per iteration.

Run ``python examples/teach_kelley_1d.py --out OUT`` from the repository root.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

LO, HI, X0 = -1.5, 2.0, -1.5


def f(x):
    """The function: ``exp(x) - 2 x + 0.5 |x - 1|`` (works on arrays)."""
    x = np.asarray(x, dtype=float)
    return np.exp(x) - 2.0 * x + 0.5 * np.abs(x - 1.0)


def fprime(x):
    """A subgradient of :func:`f` (at the kink x = 1, the left derivative)."""
    x = np.asarray(x, dtype=float)
    return np.exp(x) - 2.0 + 0.5 * np.where(x > 1.0, 1.0, -1.0)


class KelleyRun(NamedTuple):
    """What :func:`run` returns.

    Attributes
    ----------
    points : ndarray of shape (n_iter,)
        The query points ``x_0, x_1, ...`` in the order the oracle saw them.
    values, slopes : ndarray of shape (n_iter,)
        ``f(x_i)`` and the subgradient at ``x_i``: cut ``i`` is ``values[i] + slopes[i] (x - points[i])``.
    upper, lower : ndarray of shape (n_iter,)
        Best upper bound and certified lower bound after each iteration.
    result : cutplane.Result
    """

    points: np.ndarray
    values: np.ndarray
    slopes: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    result: object


def run(eps=1e-6, max_iter=100, x0=X0) -> KelleyRun:
    """Minimise :func:`f` over ``[LO, HI]`` by Kelley's method, recording every cut."""
    import cutplane
    from cutplane.regularizers import Box
    from oracles.function import FunctionOracle

    cuts = []

    def risk(w):
        x = float(w[0])
        value, slope = float(f(x)), float(fprime(x))
        cuts.append((x, value, slope))
        return value, np.array([slope])

    res = cutplane.minimize(
        FunctionOracle(risk, dim=1),
        Box(LO, HI, dim=1),
        1.0,
        method="kelley",
        eps=eps,
        max_iter=max_iter,
        w0=np.array([x0]),
    )
    pts, vals, slopes = (np.array(c) for c in zip(*cuts))
    return KelleyRun(pts, vals, slopes, res.history.best_upper.copy(), res.history.lower.copy(), res)


def model(run_, t, x):
    """The cutting-plane model ``f_t(x) = max_{i < t} f(x_i) + f'(x_i) (x - x_i)`` on points ``x``."""
    x = np.asarray(x, dtype=float)
    return np.max(run_.values[:t, None] + run_.slopes[:t, None] * (x[None, :] - run_.points[:t, None]), axis=0)


def plot(run_, path, n_panels=5):
    """Panels ``f_1 .. f_n_panels`` and the bounds per iteration; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from problems.plots import save_figure

    xs = np.linspace(LO, HI, 600)
    n_panels = min(n_panels, len(run_.points))
    fig, axes = plt.subplots(2, 3, figsize=(13.0, 7.5))
    axes = axes.ravel()
    for t in range(1, n_panels + 1):
        ax = axes[t - 1]
        ax.axvspan(LO, HI, color="0.93")
        ax.plot(xs, f(xs), "k-", lw=1.5, label="f(x)")
        for i in range(t):
            ax.plot(xs, run_.values[i] + run_.slopes[i] * (xs - run_.points[i]), color="tab:blue", lw=0.6, alpha=0.6)
        ax.plot(xs, model(run_, t, xs), color="tab:blue", lw=2.2, label=f"model f_{t}")
        ax.plot(run_.points[:t], run_.values[:t], "ko", ms=4, label=f"x_0 .. x_{t - 1}")
        if t < len(run_.points):
            x_next = run_.points[t]
            ax.plot([x_next], [run_.lower[t - 1]], "rv", ms=8, label=f"x_{t} = argmin f_{t}; lower bound")
        ax.set_ylim(min(-1.0, float(np.min(run_.lower[:n_panels]))) - 0.2, float(f(xs).max()) + 0.3)
        ax.set_title(f"after {t} cut{'s' if t > 1 else ''}: gap {run_.upper[t - 1] - run_.lower[t - 1]:.3g}")
        ax.legend(fontsize=7, loc="upper center")
    ax = axes[-1]
    it = np.arange(1, len(run_.upper) + 1)
    ax.semilogy(it, run_.upper - run_.lower, "k.-", label="gap = min_i f(x_i) - f_t(x_t)")
    ax.axhline(run_.result.eps, color="gray", ls="--", lw=0.8, label="eps")
    ax.set(xlabel="iteration (cuts)", title=f"certified gap: {run_.result.gap:.1e} after {run_.result.n_iter} cuts")
    ax.legend(fontsize=7)
    for k in range(n_panels, len(axes) - 1):
        axes[k].axis("off")
    fig.suptitle("Kelley's cutting-plane method (chapter Fig. 1.1b, Alg. 1.2) on f(x) = exp(x) - 2x + 0.5|x - 1|")
    return save_figure(fig, path, dpi=110, make_dirs=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/teaching"), help="output folder")
    parser.add_argument("--eps", type=float, default=1e-6)
    args = parser.parse_args(argv)
    r = run(eps=args.eps)
    png = plot(r, args.out / "kelley_1d.png")
    for t, (x, up, lo) in enumerate(zip(r.points, r.upper, r.lower)):
        sys.stdout.write(f"iter {t + 1:2d}  x = {x:+.6f}  upper {up:.8f}  lower {lo:.8f}  gap {up - lo:.2e}\n")
    sys.stdout.write(
        f"{r.result.status}: min f in [{r.result.lower_bound:.8f}, {r.result.objective:.8f}] "
        f"at x = {r.result.w[0]:.6f}\nfigure: {png}\n"
    )
    return r


if __name__ == "__main__":
    main()
