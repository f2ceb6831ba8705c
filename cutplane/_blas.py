"""One BLAS thread for the reduced problems' small dense algebra.

On a loaded 2-core machine multi-threaded OpenBLAS was measured 80-90x slower on small
matrices than one thread. ``threadpoolctl.threadpool_limits`` rescans the loaded libraries on
every call (~5 ms measured); one cached ``ThreadpoolController`` makes the switch ~0.05 ms.
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
