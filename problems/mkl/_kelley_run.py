"""One Kelley run of :class:`problems.mkl.kelley.KelleyMKL` (moved here from that module).

``_BestRecorder`` wraps the MKL oracle and keeps the inner SVM solution at the best point;
``_kelley_run`` runs the engine once and returns its result with the inner solution(s) at
the returned kernel weights (``KelleyMKL._run``; the wrapper methods override it).
"""
from __future__ import annotations

import warnings

import numpy as np

from cutplane.exceptions import ConvergenceWarning


class _BestRecorder:
    """Wraps an oracle and keeps the inner solution at the smallest value seen (the engine's best)."""

    def __init__(self, oracle):
        self.oracle = oracle
        self.dim = oracle.dim
        self.risk_lower_bound = oracle.risk_lower_bound
        self.best_value, self.best_beta, self.best_argmax = np.inf, None, None

    def __call__(self, beta):
        res = self.oracle(beta)
        if res.value < self.best_value:      # same strict rule as the engine's best upper bound
            self.best_value, self.best_beta, self.best_argmax = res.value, np.array(beta), res.argmax
        return res


def _kelley_run(minimize, oracle, simplex, kw):
    """One Kelley run; returns the engine result and the inner SVM solution(s) at its ``w``."""
    rec = _BestRecorder(oracle)
    with warnings.catch_warnings():
        # reported once by the estimator, with the number of runs concerned
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        res = minimize(rec, simplex, 1.0, **kw)
    argmax = rec.best_argmax
    if rec.best_beta is None or not np.array_equal(rec.best_beta, res.w):
        # the engine skipped a point (e.g. outside the simplex by round-off): solve at its w
        argmax = oracle(res.w).argmax
    return res, (argmax if isinstance(argmax, list) else [argmax])
