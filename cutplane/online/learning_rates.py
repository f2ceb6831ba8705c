"""Choice of SPOM's step-size constant ``eta0`` (``eta_t = eta0 / sqrt(t)``).

Martins et al. 2011 (Table 1) picks ``eta0`` from ``{0.01, 0.1, 1, 10}`` as the value that most decreases
the objective after 5 epochs. :func:`tune_eta0` applies the same rule on a random subsample
of the examples (a few hundred to a thousand), so that tuning costs a fraction of one epoch
on the full data; the objective is measured on that subsample,
``lam * Omega(w) + mean_{i in subsample} L_i(w)``, at the model SPOM would return.
"""

from __future__ import annotations

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["tune_eta0", "subsample_objective"]


def subsample_objective(state, sample) -> float:
    """``lam * Omega(w) + mean_{i in sample} L_i(w)`` at ``state.model()`` (an :class:`OnlineProximal`)."""
    w = state.model()
    ex = state.oracle
    losses = []
    for i in sample:
        sup = ex.example_support(int(i))
        losses.append(ex.example_subgradient(int(i), w if sup is None else w[sup]).value)
    return state.lam * state.regularizer_value(w) + float(np.mean(losses))


def tune_eta0(make_state, n_samples, grid, n_sub, n_epochs, rng):
    """The ``eta0`` of ``grid`` with the smallest subsample objective after ``n_epochs`` passes.

    Parameters
    ----------
    make_state : callable
        ``make_state(eta0) -> OnlineProximal`` (a fresh state at ``w = 0``).
    n_samples : int
    grid : sequence of float > 0
    n_sub : int
        Subsample size (``min(n_sub, n_samples)`` examples drawn without replacement).
    n_epochs : int
    rng : numpy Generator
        Draws the subsample and the orders (the same orders for every candidate).

    Returns
    -------
    eta0 : float
    scores : dict of float to float
        Candidate -> subsample objective (NaN or inf when the run diverged).
    """
    grid = [float(g) for g in grid]
    if not grid or any(not (np.isfinite(g) and g > 0) for g in grid):
        raise InputError(f"eta_grid must be non-empty, finite and > 0, got {grid}", field="eta_grid")
    if int(n_sub) < 1 or int(n_epochs) < 1:
        raise InputError("tune_samples and tune_epochs must be >= 1", field="tune_samples")
    sample = rng.choice(n_samples, size=min(int(n_sub), n_samples), replace=False)
    orders = [sample[rng.permutation(sample.size)] for _ in range(int(n_epochs))]
    scores = {}
    with np.errstate(all="ignore"):
        for eta0 in grid:
            state = make_state(eta0)
            for order in orders:
                for i in order:
                    state.step(int(i))
                state.vec.compact()
            val = subsample_objective(state, sample)
            scores[eta0] = float(val) if np.isfinite(val) else np.inf
    best = min(grid, key=lambda g: (scores[g], g))
    return best, scores
