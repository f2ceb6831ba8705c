"""Progress of long runs: a tqdm counter (iterations, bounds, gap and ``eps``, time so far) and
INFO logging.

Each iteration is logged on the ``"cutplane"`` logger at INFO level whether or not the bar
is shown; the bar is opt-in (``verbose=True``) and writes to stderr. The bar is an open-ended
counter, not a bar towards ``max_iter``: a cutting-plane run stops when its certified gap
reaches ``eps``, which is usually long before its iteration budget, so the budget would give an
ETA the run cannot know. It shows the iterations, the elapsed time, the best upper bound, the
lower bound, the gap and the ``eps`` it is compared with, all on one scale (:data:`SCALES`).

A caller that logs while a bar is shown should route its log records through ``tqdm.write``
(``tqdm.contrib.logging.logging_redirect_tqdm``), as the ``cutplane`` command does, so that the
lines and the bar do not interleave.
"""

from __future__ import annotations

import logging

from .exceptions import InputError

__all__ = ["ProgressReporter", "SCALES", "check_progress_scale", "display_factor"]

logger = logging.getLogger("cutplane")

#: The scales the bar and the log can show the bounds on: ``"F"``, the engine's objective
#: ``F(w) = lam * Omega(w) + R(w)``; ``"F/lam"``, the same divided by ``lam``, that is
#: ``Omega(w) + C * R(w)`` with ``C = 1 / lam``: the scale on which the estimators of
#: ``problems`` state their objective and ``eps``.
SCALES = ("F", "F/lam")


def check_progress_scale(value) -> str:
    """``value`` if it is one of :data:`SCALES`.

    Raises
    ------
    InputError
        Anything else (``field="progress_scale"``).
    """
    if not isinstance(value, str) or value not in SCALES:
        raise InputError(f"must be one of {', '.join(SCALES)}; got {value!r}", field="progress_scale")
    return value


def display_factor(scale: str, lam) -> float:
    """The factor that takes a bound on ``F`` to ``scale`` at ``lam`` (1, or ``1 / lam``)."""
    if scale == "F/lam" and lam:
        return 1.0 / float(lam)
    return 1.0


class ProgressReporter:
    """Reports :class:`~cutplane.result.IterationInfo` records.

    Parameters
    ----------
    verbose : bool
        Show a tqdm counter on stderr.
    desc : str
        Its label (the method name, or the running point of a path).
    scale : float, default=1.0
        Factor applied to the bounds, the gap and ``eps`` before they are shown and logged
        (:func:`display_factor`).
    eps : float, optional
        The run's tolerance on ``F`` (shown beside the gap, times ``scale``).
    log : bool, default=True
        Log each iteration at INFO on the ``"cutplane"`` logger (False when another reporter of
        the same run logs it).
    initial : int, default=0
        The iterations done before this run (a resumed run's): the counter starts there.
    """

    def __init__(self, verbose=False, desc="cutplane", *, scale=1.0, eps=None, log=True, initial=0):
        self._bar = None
        self.desc = desc
        self.scale = float(scale)
        self.eps = None if eps is None else float(eps)
        self.log = bool(log)
        if verbose:
            from tqdm.auto import tqdm

            # total=None: an open-ended counter (iterations, elapsed time, rate), no ETA
            self._bar = tqdm(
                total=None, desc=desc, unit="it", leave=True, dynamic_ncols=True, initial=max(0, int(initial))
            )

    def update(self, info) -> None:
        """Log and display one iteration."""
        s = self.scale
        if self.log:
            logger.info(
                "%s it %d: upper %.10g best %.10g lower %.10g gap %.3g%s cuts %d",
                self.desc,
                info.iteration,
                s * info.upper,
                s * info.best_upper,
                s * info.lower,
                s * info.gap,
                "" if self.eps is None else f" (eps {s * self.eps:.3g})",
                info.n_cuts,
            )
        if self._bar is not None:
            self._bar.set_postfix(self._postfix(info.best_upper, info.lower, info.gap), refresh=False)
            self._bar.update(1)

    def _postfix(self, upper, lower, gap) -> dict:
        s = self.scale
        postfix = {"upper": f"{s * upper:.6g}", "lower": f"{s * lower:.6g}", "gap": f"{s * gap:.3g}"}
        if self.eps is not None:
            postfix["eps"] = f"{s * self.eps:.3g}"
        return postfix

    def close(self, status=None, result=None) -> None:
        """Close the bar (idempotent) and log the final status.

        ``result`` (a :class:`~cutplane.result.Result`, optional) is shown as the last state:
        a reporter fed by a ``callback`` does not see the converging iteration, after which the
        engine stops without calling it.
        """
        if status is not None and self.log:
            logger.info("%s finished: %s", self.desc, status)
        if self._bar is not None:
            if result is not None:
                self._bar.n = int(result.n_iter)
                self._bar.set_postfix(self._postfix(result.objective, result.lower_bound, result.gap), refresh=False)
            if status is not None:
                self._bar.set_description_str(f"{self.desc} [{status}]", refresh=False)  # no ": " twice
            self._bar.close()
            self._bar = None
