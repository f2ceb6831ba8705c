"""One BLAS thread for the reduced problems' small dense algebra.

The reduced problems' matrices are small: on them a multi-threaded BLAS spends more time
synchronising its threads than computing, and on a shared machine it competes with the
oracle's threads, so they run with one BLAS thread. ``threadpoolctl.threadpool_limits``
rescans the loaded libraries on every call; one cached ``ThreadpoolController`` is created
once and reused, so the switch costs no rescan.
"""

from __future__ import annotations

__all__ = ["single_thread_blas"]

_CONTROLLER = None


def single_thread_blas():
    """A context manager limiting BLAS/OpenMP pools to one thread (restored on exit)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1)
