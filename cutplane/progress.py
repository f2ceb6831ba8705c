"""Progress of long runs: a tqdm bar (iteration, upper, lower, gap) and INFO logging.

Each iteration is logged on the ``"cutplane"`` logger at INFO level whether or not the bar
is shown; the bar is opt-in (``verbose=True``) and writes to stderr.
"""

from __future__ import annotations

import logging

__all__ = ["ProgressReporter"]

logger = logging.getLogger("cutplane")


class ProgressReporter:
    """Reports :class:`~cutplane.result.IterationInfo` records.

    Parameters
    ----------
    verbose : bool
        Show a tqdm bar.
    total : int
        Iteration budget (the bar's length).
    desc : str
        Bar label (the method name).
    """

    def __init__(self, verbose=False, total=None, desc="cutplane"):
        self._bar = None
        self.desc = desc
        if verbose:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="it", leave=True, dynamic_ncols=True)

    def update(self, info) -> None:
        """Log and display one iteration."""
        logger.info(
            "%s it %d: upper %.10g best %.10g lower %.10g gap %.3g cuts %d",
            self.desc,
            info.iteration,
            info.upper,
            info.best_upper,
            info.lower,
            info.gap,
            info.n_cuts,
        )
        if self._bar is not None:
            self._bar.set_postfix(
                upper=f"{info.best_upper:.6g}", lower=f"{info.lower:.6g}", gap=f"{info.gap:.2e}", refresh=False
            )
            self._bar.update(1)

    def close(self, status=None) -> None:
        """Close the bar (idempotent) and log the final status."""
        if status is not None:
            logger.info("%s finished: %s", self.desc, status)
        if self._bar is not None:
            if status is not None:
                self._bar.set_description(f"{self.desc} [{status}]")
            self._bar.close()
            self._bar = None
