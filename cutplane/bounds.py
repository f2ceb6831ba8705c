"""The certified lower bound of the cutting-plane loop: running maximum, clipping, sanity checks.

Every reduced problem's value ``F_t(w_t)`` is a lower bound on ``min F`` when the cuts are
minorants of the risk (Franc et al. 2012, sec. 1.2, weak duality); :func:`cutplane.minimize` keeps their
running maximum, never above the best upper bound. A bound above the best upper bound by more
than round-off means a cut was not a minorant: an oracle error for exact cuts (raised), an
artefact of the approximation for inexact ones (logged and clipped).
"""

from __future__ import annotations

import logging

import numpy as np

from .exceptions import InputError

__all__ = ["update_lower", "clip_lower"]

logger = logging.getLogger("cutplane")


def clip_lower(lower, best_upper, exact, iteration):
    """After a line-search point lowered the best upper bound: keep ``lower <= best_upper``.

    By weak duality ``F(w) >= min F >= lower`` at every point, so only round-off may put the
    new best upper bound below the lower bound; the lower bound is then clipped to it (the same
    convention as :func:`update_lower`: it moves by round-off only). More than round-off is a
    wrong cut: raised for exact cuts, logged and clipped for inexact ones.
    """
    if best_upper >= lower:
        return lower
    if lower - best_upper > 1e-6 * max(1.0, abs(best_upper)):
        msg = (
            f"iteration {iteration}: the line search found F = {best_upper:.12g} below the certified "
            f"lower bound {lower:.12g}; the oracle's cuts are not minorants of R"
        )
        if exact:
            raise InputError(msg, field="oracle")
        logger.warning("%s; clipped (inexact cuts)", msg)
    return best_upper


def update_lower(lower, candidate, best_upper, exact, iteration):
    """Running max of the reduced values, clipped at the best upper bound.

    A reduced value above the best upper bound by more than round-off means a cut was not a
    minorant of ``R``: with exact cuts that is an oracle error and raised; with inexact
    cuts it is logged and clipped (the certificate is relative to the approximation).
    """
    tol = 1e-6 * max(1.0, abs(best_upper))
    if candidate is None or not np.isfinite(candidate):
        return min(lower, best_upper)
    if candidate > best_upper + tol:
        msg = (
            f"iteration {iteration}: reduced-problem lower bound {candidate:.12g} exceeds the best upper "
            f"bound {best_upper:.12g}; the oracle's cuts are not minorants of R (wrong subgradient or "
            "offset, or a non-convex risk)"
        )
        if exact:
            raise InputError(msg, field="oracle")
        logger.warning("%s; clipped (inexact cuts)", msg)
    # when a new best upper bound meets the lower bound, round-off can put the old lower bound
    # a few ulps above it: clip, so the gap is never negative (the bound moves by round-off only)
    return min(max(lower, candidate), best_upper)
