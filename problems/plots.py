"""Figures of a training run: template weights (Mao and Tsang 2013, Fig. 2/5/6 style) and the certified bounds.

matplotlib is a dependency of the package (an environment may still lack it:
:func:`matplotlib_available`); every function imports it lazily, uses the non-interactive Agg
backend and writes a PNG, returning its path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["plot_template_weights", "plot_bounds", "plot_path", "matplotlib_available", "SCORE_UNITS"]


def matplotlib_available() -> bool:
    """True when matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path, *, dpi=120, make_dirs=False) -> Path:
    """``tight_layout``, write ``fig`` to ``path`` (creating its folder when ``make_dirs``), close it.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    plt = _pyplot()
    fig.tight_layout()
    path = Path(path)
    if make_dirs:
        path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def plot_template_weights(weights, path, *, title="template weights", floor=1e-12):
    """Sorted template weights on a log scale.

    Parameters
    ----------
    weights : dict of str to float
        Weight (``mu_j`` or ``||w_j||``) by template name.
    path : str or os.PathLike
        Output PNG.
    floor : float
        Weights below it (exact zeros included) are drawn at ``floor`` and counted as zero.
    """
    if not weights:
        raise InputError("no template weights to plot", field="weights")
    names = list(weights)
    vals = np.array([float(weights[n]) for n in names])
    order = np.argsort(-vals)
    shown = np.maximum(vals[order], floor)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.25 * len(names)), 4.0))
    ax.bar(np.arange(len(names)), shown, color=np.where(vals[order] > floor, "tab:blue", "tab:gray"))
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(names)))
    ax.set_xticklabels([names[i] for i in order], rotation=90, fontsize=7)
    ax.set_ylabel("weight (log scale)")
    ax.set_title(f"{title}: {int(np.sum(vals > floor))} of {len(names)} non-zero")
    return save_figure(fig, path)


def plot_bounds(history, path, *, scale=1.0, title="certified bounds"):
    """Best upper bound and lower bound per iteration, with the gap on a log scale.

    Parameters
    ----------
    history : object with arrays ``best_upper``, ``lower`` (and ``upper``)
        :attr:`cutplane.Result.history`.
    scale : float
        Multiplier to the user's objective scale (``C`` for the estimators).
    """
    best = scale * np.asarray(history.best_upper, dtype=float)
    lower = scale * np.asarray(history.lower, dtype=float)
    if best.size == 0:
        raise InputError("empty history: nothing to plot", field="history")
    it = np.arange(1, best.size + 1)
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.0))
    ax1.plot(it, best, label="best upper bound F(w)")
    finite = np.isfinite(lower)
    ax1.plot(it[finite], lower[finite], label="lower bound")
    ax1.set_xlabel("iteration")
    ax1.set_ylabel("objective")
    ax1.legend()
    gap = best - lower
    ok = finite & (gap > 0)
    ax2.semilogy(it[ok], gap[ok])
    ax2.set_xlabel("iteration")
    ax2.set_ylabel("certified gap")
    fig.suptitle(title)
    return save_figure(fig, path)


#: The units of a score: ``"fraction"`` in [0, 1] (the estimators' ``score``, ``path_`` and the
#: scorers, as scikit-learn's), ``"percent"`` in [0, 100] (everything the command line shows).
SCORE_UNITS = ("fraction", "percent")


def plot_path(path, out, *, unit, metric="validation score", chosen=None, title="C chosen on held-out data"):
    """The validation score and the certified gap along C (log scale), one marker per point.

    Parameters
    ----------
    path : dict of str to list
        A path table (columns ``C``, ``validation_score``, ``gap``, ``objective``): an
        estimator's ``path_`` (scores as fractions) or the command line's report ``path``
        (percent).
    out : str or os.PathLike
        Output PNG.
    unit : {"fraction", "percent"}
        The unit of ``path["validation_score"]``, named on the score axis (the values are drawn
        as given, never rescaled).
    metric : str
        Name of the validation score (y label, followed by the unit).
    chosen : float, optional
        The chosen C, marked by a vertical line.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    InputError
        An empty path, a unit other than ``"fraction"`` / ``"percent"``, or a score outside the
        unit's range ([0, 1] or [0, 100]).
    """
    if unit not in SCORE_UNITS:
        raise InputError(f"unit must be one of {SCORE_UNITS}, got {unit!r}", field="unit")
    Cs = np.asarray(path.get("C") or [], dtype=float)
    if Cs.size == 0:
        raise InputError("empty path: nothing to plot", field="path")
    order = np.argsort(Cs)

    def column(name):
        return np.array([np.nan if v is None else float(v) for v in path.get(name) or [None] * Cs.size])[order]

    C, score, gap, obj = Cs[order], column("validation_score"), column("gap"), column("objective")
    top = 1.0 if unit == "fraction" else 100.0
    if np.any((score < 0) | (score > top)):  # NaN (no score) compares False
        raise InputError(f"validation scores outside [0, {top:g}] for unit {unit!r}", field="path")
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.0))
    ok = np.isfinite(score)
    ax1.semilogx(C[ok], score[ok], "o-")
    ax1.set_xlabel("C")
    ax1.set_ylabel(f"{metric} ({unit})")
    ok = np.isfinite(gap) & (gap > 0) & np.isfinite(obj)
    ax2.loglog(C[ok], gap[ok], "o-", label="certified gap")
    ax2.loglog(C[ok], np.abs(obj[ok]), "s--", label="objective F")
    ax2.set_xlabel("C")
    ax2.set_ylabel("on the scale of F")
    ax2.legend()
    if chosen is not None:
        for ax in (ax1, ax2):
            ax.axvline(float(chosen), color="tab:gray", linestyle=":")
    fig.suptitle(title if chosen is None else f"{title}: C = {float(chosen):g}")
    return save_figure(fig, out)
