"""Cuts rounded to single precision, with an offset that keeps them minorants where the optimum is.

With dense slopes of tens of thousands of coordinates and hundreds of cuts, the two products
over the stored slopes in every iteration (the Gram row of the new cut, ``A a``, and the
combination ``w = -A^T alpha / lam``) stream the whole block from memory. Stored as float32 the
block is half the bytes, and the products, accumulated in float64, read half as much
(:mod:`cutplane.working_set._single_kernels`). The rounded slope ``a~ = fl32(a)`` is not the
oracle's slope, so the offset is lowered to keep the rounded cut below the exact one on a region
known to hold the optimum ``w*``:

    ``b~ = b + <r, c> - ||r||_2 rho``,  with ``r = a - a~``,

is the largest offset with ``b~ + <a~, w> <= b + <a, w>`` for every ``w`` in the ball
``B(c, rho) = {w : ||w - c||_2 <= rho}``. If ``w*`` is in the ball, the rounded cut is a minorant
of ``R`` at ``w*``, which is all the lower bound needs: ``D(alpha) <= min_w F_t(w) <= F_t(w*) <= J*``.

The ball comes from the reduced problem's dual (:func:`ball_from_dual`): when ``Omega`` is
``mu``-strongly convex in the Euclidean norm, every ``alpha`` on the simplex gives
``F_t(w) >= D(alpha) + lam mu / 2 ||w - w_alpha||^2`` with ``w_alpha = grad Omega^*(-A alpha / lam)``
(the reduced minimiser of the last solve), and ``F_t(w*) <= J* <= U`` (the best upper bound), so
``||w* - w_alpha||^2 <= 2 (U - D(alpha)) / (lam mu)``. Its radius shrinks with the gap, and the
shift with it. Before the first solve, the first exact cut alone gives such a ball
(:func:`ball_from_cut`: the one-cut model with ``alpha = 1``). By induction every rounded cut
is a minorant at ``w*``: each ball is derived from a model whose cuts all are.

The exact offset ``b`` and the bound ``e >= ||r||`` are kept per cut: for another problem (a warm
start at another ``lam``) the cut is made valid again on any ball ``B`` that holds the new optimum
by :func:`stale_offset`, ``b - e max_{w in B} ||w||``, without the residual's direction.

Floating point: the computed ``<r, c>`` and ``||r||`` carry relative errors of at most about
``dim`` units in the last place; the shift adds that much (:data:`_DOT_SLACK`), so the rounding
of these few sums cannot make a cut invalid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Ball", "RoundedCut", "ball_from_dual", "ball_from_cut", "round_cut", "stale_offset"]

_EPS = float(np.finfo(np.float64).eps)
#: Relative slack per coordinate on the computed sums ``<r, c>`` and ``||r||`` (a dot product of
#: ``n`` terms is off by at most ``n eps`` times the sum of the terms' magnitudes).
_DOT_SLACK = 2.0 * _EPS


@dataclass(frozen=True)
class Ball:
    """``{w : ||w - center||_2 <= radius}``, a region that holds the optimum ``w*``.

    Attributes
    ----------
    center : ndarray of shape (dim,)
        Not copied: the caller does not modify it afterwards.
    radius : float
        ``>= 0``.
    center_norm : float
        ``||center||_2``.
    """

    center: np.ndarray
    radius: float
    center_norm: float

    @property
    def max_norm(self) -> float:
        """``max_{w in ball} ||w||_2 = ||center|| + radius``."""
        return self.center_norm + self.radius


@dataclass(frozen=True)
class RoundedCut:
    """A cut rounded to float32 (:func:`round_cut`).

    Attributes
    ----------
    slope : ndarray of float64 of shape (dim,)
        ``fl32(a)``: every entry is a float32 number (stored as float32 without loss).
    offset : float
        ``b~``, valid on the ball it was rounded for.
    exact_offset : float
        The oracle's ``b``.
    residual_norm : float
        An upper bound on ``||a - fl32(a)||_2`` (0 when ``a`` was a float32 vector already).
    """

    slope: np.ndarray
    offset: float
    exact_offset: float
    residual_norm: float


def _ball(center, radius) -> Ball:
    center = np.asarray(center, dtype=np.float64)
    return Ball(center, float(radius), math.sqrt(float(np.einsum("i,i->", center, center))))


def ball_from_dual(center, lower, upper, lam, modulus) -> Ball:
    """The ball around the reduced minimiser that holds ``w*``.

    Parameters
    ----------
    center : ndarray of shape (dim,)
        ``w_alpha = grad Omega^*(-A alpha / lam)``, the minimiser the reduced solve returned.
    lower : float
        ``D(alpha)``, the dual value of that solve at the same ``alpha`` (not a running maximum).
    upper : float
        An upper bound on ``J*`` (the best value of ``J`` seen).
    lam : float
    modulus : float
        ``mu``: ``Omega`` is ``mu``-strongly convex in the Euclidean norm (1 for ``1/2 ||w||^2``).

    Returns
    -------
    Ball
        Radius ``sqrt(2 (U - D) / (lam mu))``, with ``U - D`` raised by the round-off of the two
        values (a few units in the last place of each).
    """
    gap = max(float(upper) - float(lower), 0.0) + 4.0 * _EPS * (abs(float(upper)) + abs(float(lower)))
    return _ball(center, math.sqrt(2.0 * gap / (float(lam) * float(modulus))))


def ball_from_cut(slope, offset, upper, lam, regularizer, modulus) -> Ball:
    """The ball of the one-cut model ``lam Omega(w) + <a, w> + b`` (before any reduced solve).

    An exact cut is a minorant everywhere, so ``lam Omega(w*) + <a, w*> + b <= J* <= U``; its
    dual at ``alpha = 1`` is ``D = b - lam Omega^*(-a / lam)`` with minimiser
    ``grad Omega^*(-a / lam)`` (:func:`ball_from_dual`).

    Parameters
    ----------
    slope : ndarray of shape (dim,)
    offset : float
    upper : float
    lam : float
    regularizer : Regularizer
        Its ``conjugate`` and ``grad_conjugate``.
    modulus : float
    """
    v = np.asarray(slope, dtype=np.float64).ravel() * (-1.0 / float(lam))
    lower = float(offset) - float(lam) * float(regularizer.conjugate(v))
    return ball_from_dual(np.asarray(regularizer.grad_conjugate(v), dtype=np.float64), lower, upper, lam, modulus)


def round_cut(slope, offset, ball: Ball) -> RoundedCut:
    """Round a dense cut to float32 and lower its offset so that it stays below the exact cut on ``ball``.

    ``b~ = b + <r, c> - ||r|| rho`` with ``r = a - fl32(a)`` (see the module docstring), lowered
    further by the round-off bound of the two sums.

    Parameters
    ----------
    slope : ndarray of float64 of shape (dim,)
    offset : float
    ball : Ball

    Returns
    -------
    RoundedCut
        With a NaN offset when an entry of ``slope`` is beyond float32's range (the cut cannot be
        rounded; store it exactly).
    """
    a = np.asarray(slope, dtype=np.float64)
    with np.errstate(over="ignore"):
        rounded = a.astype(np.float32).astype(np.float64)
    if not np.all(np.isfinite(rounded)):  # beyond float32's range: no rounded cut
        return RoundedCut(rounded, math.nan, float(offset), math.inf)
    r = a - rounded  # exact: the difference of a double and its nearest float is a double
    sq = float(np.einsum("i,i->", r, r))
    if sq == 0.0:
        return RoundedCut(rounded, float(offset), float(offset), 0.0)
    slack = _DOT_SLACK * a.shape[0]
    norm = math.sqrt(sq) * (1.0 + slack)
    rc = float(r @ ball.center)
    shift = rc - norm * ball.radius - slack * norm * ball.center_norm
    shift -= 2.0 * _EPS * (abs(float(offset)) + abs(rc) + norm * ball.radius)  # the additions' round-off
    return RoundedCut(rounded, float(offset) + shift, float(offset), norm)


def stale_offset(exact_offset, residual_norm, ball: Ball):
    """Offsets of rounded cuts made valid on another ball, from their exact offsets alone.

    A stored cut ``(a~, b)`` with ``||a - a~|| <= e`` satisfies ``b + <a~, w> - e ||w|| <= b + <a, w>``,
    so ``b - e max_{w in B} ||w||`` is valid on ``B`` whatever the residual's direction.

    Parameters
    ----------
    exact_offset, residual_norm : ndarray of shape (n,)
    ball : Ball

    Returns
    -------
    ndarray of shape (n,)
    """
    e = np.asarray(residual_norm, dtype=np.float64)
    return np.asarray(exact_offset, dtype=np.float64) - e * ball.max_norm * (1.0 + 4.0 * _EPS)
