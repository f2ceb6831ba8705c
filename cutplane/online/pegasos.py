r"""Structured PEGASOS (Shalev-Shwartz et al. 2007, 2010), with a per-group feature scaling.

It minimises, for a fixed per-group scaling ``s_j = sqrt(beta_j)`` of the features (the inner
SVM of a wrapper method for multiple kernel learning, with kernel weights ``beta``),

.. math:: P(u) = \frac{\lambda}{2}\|u\|^2 + \frac1n \sum_{i=1}^n L_i(s \circ u),

where ``L_i`` is the structured hinge of example ``i`` (loss-augmented decoding through the
per-example protocol of :mod:`cutplane.online.example_oracles`). Scaling the features of group
``j`` by ``sqrt(beta_j)`` is the same as evaluating the oracle at ``v = s o u``; the chain rule
gives the subgradient ``s o g`` with ``g = Phi(x_i, y^_i) - Phi(x_i, y_i)``. Round ``t`` (one
example ``i``, counted over all calls so a warm start continues the schedule):

1. ``eta_t = 1 / (lam t)``;
2. ``u <- (1 - eta_t lam) u - eta_t (s o g)`` (at ``t = 1`` the first factor is 0);
3. optional projection onto the ball ``||u|| <= radius``; ``radius = sqrt(2 R(0) / lam)`` bounds
   the optimum (``lam/2 ||u*||^2 <= P(u*) <= P(0) = R(0)``), so the ball is vacuous there.

The weights are kept as ``u = a * z`` (a scalar times a vector), so the shrinkage of step 2 is
O(1) and a round costs the oracle's support plus the subgradient's nonzeros; ``||z||^2`` is
updated incrementally and everything is recomputed exactly at the end of each epoch.
Each epoch visits the examples in an order drawn from ``np.random.default_rng(seed)`` (pass the
same Generator to continue a stream across warm-started calls).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from cutplane.exceptions import InputError

from .example_oracles import as_example_oracle

__all__ = ["pegasos", "PegasosResult", "pegasos_radius"]


@dataclass
class PegasosResult:
    """What :func:`pegasos` returns.

    Attributes
    ----------
    u : ndarray of shape (dim,)
        Weights in the scaled feature space (the warm start of the next call).
    w : ndarray of shape (dim,)
        ``scale * u``: the predictor in the original feature space.
    t : int
        Rounds done in total, including the ``t0`` of a warm start (pass it back as ``t0``).
    epochs : int
        Epochs completed in this call.
    time_s : float
        Seconds in the rounds (callbacks excluded).
    epoch_losses : ndarray of shape (epochs,)
        Mean ``L_i`` seen during each epoch (before each update).
    status : str
        ``"completed"`` or ``"callback"``.
    """

    u: np.ndarray
    w: np.ndarray
    t: int
    epochs: int
    time_s: float
    epoch_losses: np.ndarray = field(default_factory=lambda: np.zeros(0))
    status: str = "completed"


def pegasos_radius(risk0: float, lam: float) -> float:
    """``sqrt(2 R(0) / lam)``: the ball containing the minimiser of ``lam/2 ||u||^2 + R`` (``R >= 0``)."""
    if not (np.isfinite(risk0) and risk0 >= 0 and lam > 0):
        raise InputError(f"need R(0) >= 0 and lam > 0, got {risk0}, {lam}", field="risk0")
    return float(np.sqrt(2.0 * risk0 / lam))


def pegasos(
    oracle,
    lam,
    *,
    epochs=1,
    scale=None,
    u0=None,
    t0=0,
    radius=None,
    seed=0,
    callback=None,
) -> PegasosResult:
    """Run structured PEGASOS on ``lam/2 ||u||^2 + mean_i L_i(scale o u)``; see the module docstring.

    Parameters
    ----------
    oracle : ExampleOracle or an oracle :func:`~cutplane.online.example_oracles.as_example_oracle` wraps
    lam : float > 0
    epochs : int, default=1
        Passes over the examples.
    scale : array-like of shape (dim,), optional
        Per-coordinate feature scaling ``s`` (``sqrt(beta)`` of each coordinate's group);
        default all ones.
    u0 : array-like of shape (dim,), optional
        Warm start (default 0).
    t0 : int, default=0
        Rounds already done (the schedule continues at ``t0 + 1``).
    radius : float or None, default=None
        Projection radius (None: no projection); see :func:`pegasos_radius`.
    seed : int, Generator or None, default=0
        For ``np.random.default_rng``: the epoch orders.
    callback : callable, optional
        ``callback(epoch, t, u)`` after each epoch (``u`` of shape (dim,), do not modify);
        returning True stops.

    Returns
    -------
    PegasosResult
    """
    ex = as_example_oracle(oracle)
    n, dim = int(ex.n_samples), int(ex.dim)
    lam = float(lam)
    if not (np.isfinite(lam) and lam > 0):
        raise InputError(f"lam must be finite and > 0, got {lam}", field="lam")
    if isinstance(epochs, bool) or int(epochs) != epochs or epochs < 0:
        raise InputError(f"epochs must be an integer >= 0, got {epochs!r}", field="epochs")
    if isinstance(t0, bool) or int(t0) != t0 or t0 < 0:
        raise InputError(f"t0 must be an integer >= 0, got {t0!r}", field="t0")
    s = np.ones(dim) if scale is None else np.asarray(scale, dtype=np.float64)
    if s.shape != (dim,) or not np.all(np.isfinite(s)) or np.any(s < 0):
        raise InputError(f"scale must hold {dim} finite numbers >= 0", field="scale")
    z = np.zeros(dim) if u0 is None else np.array(u0, dtype=np.float64)
    if z.shape != (dim,) or not np.all(np.isfinite(z)):
        raise InputError(f"u0 must hold {dim} finite numbers", field="u0")
    if radius is not None and not (float(radius) > 0):
        raise InputError(f"radius must be > 0 or None, got {radius!r}", field="radius")
    rng = np.random.default_rng(seed)
    a = 1.0
    sq = float(z @ z)
    t = int(t0)
    done, status, losses, elapsed = 0, "completed", [], 0.0
    for _ in range(int(epochs)):
        tic = time.perf_counter()
        total = 0.0
        for i in rng.permutation(n):
            t += 1
            eta = 1.0 / (lam * t)
            sup = ex.example_support(int(i))
            if sup is None:
                v = (a * s) * z
            else:
                v = (a * s[sup]) * z[sup]
            sg = ex.example_subgradient(int(i), v)
            total += sg.value
            shrink = 1.0 - eta * lam
            if shrink <= 0.0:  # t == 1: the previous weights are forgotten
                z[:] = 0.0
                a, sq = 1.0, 0.0
            else:
                a *= shrink
            if sg.indices.size:
                idx = sg.indices
                old = z[idx]
                new = old - (eta / a) * s[idx] * sg.values
                z[idx] = new
                sq += float(new @ new - old @ old)
            if radius is not None:
                nrm = abs(a) * np.sqrt(max(sq, 0.0))
                if nrm > radius:
                    a *= radius / nrm
            if a < 1e-150 or a > 1e150:
                z *= a
                a, sq = 1.0, float(z @ z)
        z *= a
        a, sq = 1.0, float(z @ z)
        elapsed += time.perf_counter() - tic
        losses.append(total / n)
        done += 1
        if callback is not None and callback(done, t, z):
            status = "callback"
            break
    return PegasosResult(u=z, w=s * z, t=t, epochs=done, time_s=elapsed, epoch_losses=np.asarray(losses), status=status)
