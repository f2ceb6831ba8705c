"""Write your own risk: two new losses as oracles, trained by BMRM and LS-BMRM with a certified gap.

The engine minimises ``F(w) = lam * Omega(w) + R(w)`` knowing ``R`` only through an *oracle*: at a
query point ``w`` it returns ``R(w)`` and one subgradient ``a`` (the cut ``R(v) >= R(w) + <a, v - w>``).
Nothing else is needed to get a certified solution: the engine keeps the cuts, solves the
reduced problem, and stops when its lower bound and the best ``F`` are ``eps`` apart.

1. **Epsilon-insensitive regression** (support vector regression without bias)::

       R(w) = (1/n) sum_i max(0, |<x_i, w> - y_i| - epsilon)

   a subgradient is ``(1/n) sum_i s_i x_i`` with ``s_i = sign(<x_i, w> - y_i)`` where the residual
   is outside the tube, 0 inside. Written as a plain function wrapped by
   :class:`oracles.function.FunctionOracle`.

2. **Pairwise ranking** (RankSVM's hinge on pairs)::

       R(w) = (1/|P|) sum_{(i, j) in P} max(0, 1 - <w, x_i - x_j>),   P = {(i, j): y_i > y_j}

   a subgradient is ``-(1/|P|) sum of (x_i - x_j)`` over the pairs with a positive hinge. Written as
   a small class with ``dim`` and ``__call__(w) -> OracleResult`` (the :class:`cutplane.protocols.Oracle`
   protocol), for when the oracle keeps data of its own (here the pair differences).

Both are trained with ``Omega = 1/2 ||w||^2`` (:class:`cutplane.regularizers.L2`) by
``method="bmrm"`` and ``method="ls-bmrm"``; the script prints objective, certified lower bound,
gap and iterations. Run ``python examples/write_your_own_risk.py`` from the repository root.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from oracles.function import FunctionOracle


# --------------------------------------------------------------- 1. a function and FunctionOracle
def epsilon_insensitive_risk(X, y, epsilon=0.1):
    """``R(w) = mean max(0, |Xw - y| - epsilon)`` as an oracle of dimension ``X.shape[1]``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    epsilon : float
        Half-width of the insensitive tube.
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)

    def risk(w):
        r = X @ w - y
        outside = np.abs(r) > epsilon
        value = np.mean(np.maximum(np.abs(r) - epsilon, 0.0))
        return value, X.T @ (np.sign(r) * outside) / len(y)

    return FunctionOracle(risk, dim=X.shape[1])


# ------------------------------------------------------------------------- 2. a small class
class PairwiseRankingRisk:
    """``R(w) = mean over pairs y_i > y_j of max(0, 1 - <w, x_i - x_j>)``, an oracle.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Relevance scores; pairs are formed where ``y_i > y_j``.

    Attributes
    ----------
    dim : int
    diffs : ndarray of shape (n_pairs, n_features)
        ``x_i - x_j`` for every ordered pair.
    risk_lower_bound : float
        0: the hinge is non-negative (the engine uses it to bound the model from below).
    """

    risk_lower_bound = 0.0

    def __init__(self, X, y):
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        i, j = np.nonzero(y[:, None] > y[None, :])
        if i.size == 0:
            raise InputError("no pair with y_i > y_j: nothing to rank", field="y")
        self.diffs = X[i] - X[j]
        self.dim = X.shape[1]

    def __call__(self, w):
        margins = 1.0 - self.diffs @ w
        active = margins > 0
        value = float(np.mean(np.maximum(margins, 0.0)))
        slope = -self.diffs[active].sum(axis=0) / len(margins)
        return OracleResult(value, Cut(slope, value - slope @ w))


# ------------------------------------------------------------------------------- training
def make_data(n_samples=200, n_features=10, noise=0.3, seed=0):
    """A linear model with noise: ``X`` (n_samples, n_features), real targets ``y``, true ``w``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    w_true = rng.standard_normal(n_features)
    return X, X @ w_true + noise * rng.standard_normal(n_samples), w_true


def train(oracle, lam, method, eps=1e-6):
    """``cutplane.minimize(oracle, L2(), lam, method=method, eps=eps)``: the certified result."""
    import cutplane
    from cutplane.regularizers import L2

    return cutplane.minimize(oracle, L2(), lam, method=method, eps=eps, max_iter=2000)


def run(n_samples=200, n_features=10, lam=0.01, epsilon=0.1, eps=1e-6, seed=0) -> dict:
    """Train both risks with both methods; ``{(risk, method): cutplane.Result}``."""
    X, y, _ = make_data(n_samples, n_features, seed=seed)
    risks = {
        "epsilon-insensitive": lambda: epsilon_insensitive_risk(X, y, epsilon),
        "pairwise-ranking": lambda: PairwiseRankingRisk(X[:60], y[:60]),
    }
    return {
        (name, method): train(make(), lam, method, eps)
        for name, make in risks.items()
        for method in ("bmrm", "ls-bmrm")
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-samples", type=int, default=200, dest="n_samples")
    parser.add_argument("--n-features", type=int, default=10, dest="n_features")
    parser.add_argument("--lam", type=float, default=0.01, help="weight of 1/2 ||w||^2")
    parser.add_argument("--eps", type=float, default=1e-6, help="certified tolerance on F")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    results = run(args.n_samples, args.n_features, lam=args.lam, eps=args.eps, seed=args.seed)
    sys.stdout.write(
        f"{'risk':20s} {'method':8s} {'objective F':>14s} {'lower bound':>14s} {'gap':>9s} {'iters':>5s} status\n"
    )
    for (risk, method), r in results.items():
        sys.stdout.write(
            f"{risk:20s} {method:8s} {r.objective:14.8f} {r.lower_bound:14.8f} {r.gap:9.2e} {r.n_iter:5d} {r.status}\n"
        )
    return results


if __name__ == "__main__":
    main()
