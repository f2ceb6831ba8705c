"""Timing and page helpers shared by the benchmark scripts (``from benchmarks._timing import best_of,
fixed``; the scripts run from the repository root as ``python -m benchmarks.<name>``)."""

from __future__ import annotations

import time

__all__ = ["best_of", "fixed"]


def best_of(fn, repeat, *, clock=time.perf_counter, warmup=False):
    """Smallest time of ``repeat`` calls of ``fn`` (at least one), and the last result.

    Parameters
    ----------
    fn : callable
        Called without arguments.
    repeat : int
    clock : callable, default=time.perf_counter
        ``time.perf_counter`` for wall time; ``time.process_time`` for the CPU seconds of this
        process (immune to waiting for a core on a shared machine, for single-threaded code).
    warmup : bool, default=False
        Call ``fn`` once, untimed, first (compilation, caches).

    Returns
    -------
    seconds : float
    out : object
        What the last call returned.
    """
    out = fn() if warmup else None
    best = float("inf")
    for _ in range(max(1, int(repeat))):
        t0 = clock()
        out = fn()
        best = min(best, clock() - t0)
    return best, out


def fixed(x, nd=2) -> str:
    """``x`` with ``nd`` decimals for a results page, ``"-"`` for None (not measured)."""
    return "-" if x is None else f"{x:.{nd}f}"
