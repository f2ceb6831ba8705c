"""FunctionOracle / @oracle declare the risk's lower bound: an L1 run needs no risk_lower_bound."""

import numpy as np
import pytest

import cutplane
from cutplane.exceptions import InputError
from cutplane.regularizers import L1
from oracles.function import FunctionOracle, oracle


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    t = X @ np.array([1.0, 0.0, -2.0, 0.0]) + 0.1 * rng.standard_normal(80)
    return X, t


def test_l1_run_with_the_declared_bound_matches_the_explicit_keyword():
    X, t = _data()

    def mad(w):
        r = X @ w - t
        return np.abs(r).mean(), X.T @ np.sign(r) / len(t)

    declared = oracle(dim=4, risk_lower_bound=0.0)(mad)
    assert declared.risk_lower_bound == 0.0
    res = cutplane.minimize(declared, L1(), lam=0.05, eps=1e-6)
    ref = cutplane.minimize(FunctionOracle(mad, 4), L1(), lam=0.05, eps=1e-6, risk_lower_bound=0.0)
    assert res.status == "converged" and res.gap <= 1e-6
    assert res.objective == pytest.approx(ref.objective, abs=2e-6)


def test_without_a_bound_l1_still_needs_the_keyword():
    X, t = _data()
    plain = FunctionOracle(lambda w: (np.abs(X @ w - t).mean(), X.T @ np.sign(X @ w - t) / len(t)), 4)
    assert plain.risk_lower_bound is None
    with pytest.raises(Exception, match="unbounded"):
        cutplane.minimize(plain, L1(), lam=0.05, eps=1e-6)


def test_bad_bounds_refused():
    with pytest.raises(InputError) as err:
        FunctionOracle(lambda w: (0.0, w), 2, risk_lower_bound=float("nan"))
    assert err.value.field == "risk_lower_bound"
    below = FunctionOracle(lambda w: (-1.0, np.zeros(2)), 2, risk_lower_bound=0.0)
    with pytest.raises(InputError, match="below its declared"):
        below(np.zeros(2))
