"""Signals as interrupts of the cutting-plane loop, deferred out of its critical sections.

:func:`cutplane.minimize` with a checkpoint runs inside an :class:`InterruptGuard`: SIGTERM (and
SIGINT, when Python's default handler is in place) become ``KeyboardInterrupt``, which the engine
catches to save its state and return the best point so far. A signal arriving while the engine
modifies its state (adding a cut, recording the duals, moving to the next query point) is held
until the end of that :meth:`~InterruptGuard.critical` section, so the saved state is always
consistent.
"""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["InterruptGuard", "raised_by_interrupt"]


class InterruptGuard:
    """While active in the main thread, SIGTERM (and SIGINT if Python's default handler is in
    place) raise ``KeyboardInterrupt``, deferred to the end of any :meth:`critical` section.

    Used as a context manager; the previous handlers are restored on exit. Outside the main
    thread (signals are delivered there only) it installs nothing.
    """

    def __init__(self, enabled=True):
        self.enabled = enabled
        self.signal_received = None
        self._depth = 0
        self._deferred = False
        self._previous = {}

    def _handler(self, signum, frame):
        self.signal_received = signum
        if self._depth > 0:
            self._deferred = True
            return
        raise KeyboardInterrupt(f"signal {signum}")

    def __enter__(self):
        if self.enabled and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                current = signal.getsignal(sig)
                if sig == signal.SIGINT and current is not signal.default_int_handler:
                    continue  # someone else's handler: leave it alone
                self._previous[sig] = current
                signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        return False

    def check(self) -> None:
        """Raise the interrupt of a signal received earlier and not acted on.

        The handler raises ``KeyboardInterrupt`` where the main thread happens to be; inside a
        library's callback (numba loading or compiling a kernel, for one) it may be swallowed, or
        turned into another error that the library handles. The engine calls this at each
        iteration boundary, so such a signal still ends the run there.
        """
        if self.signal_received is not None and self._depth == 0:
            raise KeyboardInterrupt(f"signal {self.signal_received}")

    @contextlib.contextmanager
    def critical(self):
        """A section a signal must not cut in half: the interrupt is raised at its end."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        if self._depth == 0 and self._deferred:
            self._deferred = False
            raise KeyboardInterrupt(f"signal {self.signal_received}")


def raised_by_interrupt(exc: BaseException) -> bool:
    """True when ``exc`` was caused by a ``KeyboardInterrupt`` (its ``__cause__`` / ``__context__``
    chain holds one): how a signal raised inside a C extension's callback comes back, e.g. numba's
    ``SystemError: ... returned a result with an exception set``."""
    seen = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False
