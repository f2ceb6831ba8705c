"""The engine's constraint cache (``cache_steps``): cuts from the oracle's cached outputs keep the
certificate and reach the optimum of the run without them."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cutplane import minimize, regularization_path
from cutplane.exceptions import InputError
from cutplane.protocols import CachingOracle
from cutplane.regularizers import L2, MixedNorm
from oracles.linear import BinaryHinge
from oracles.sequence import SequenceHingeOracle
from tests.oracles.test_sequence_oracle import random_data


def _oracle(seed, n=40, nf=12, K=3):
    rng = np.random.default_rng(seed)
    return SequenceHingeOracle(*random_data(rng, n, 6, nf, K, max_feats=4), nf, K)


def _reg(kind, oracle):
    if kind == "l2":
        return L2()
    groups = np.concatenate(
        [np.repeat(np.arange(oracle.n_features) % 3, oracle.n_labels), np.full(oracle.n_labels**2, 3)]
    )
    return MixedNorm(groups, p=1.0, n_groups=4)


def _check_history(res):
    h = res.history
    assert np.all(np.diff(h.lower) >= -1e-12 * (1 + np.abs(h.lower[1:])))
    assert np.all(h.lower <= h.best_upper + 1e-12)
    np.testing.assert_array_equal(h.best_upper, np.minimum.accumulate(h.upper))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), kind=st.sampled_from(["l2", "mtl"]), lam=st.sampled_from([0.01, 0.1, 1.0]))
def test_cached_cuts_keep_the_certificate_and_the_optimum(seed, kind, lam):
    eps = 1e-4
    plain = minimize(_oracle(seed), _reg(kind, _oracle(seed)), lam, eps=eps, max_iter=2000)
    oracle = _oracle(seed)
    assert isinstance(oracle, CachingOracle)
    cached = minimize(oracle, _reg(kind, oracle), lam, eps=eps, max_iter=2000, cache_steps=5)
    assert plain.status == cached.status == "converged"
    _check_history(cached)
    assert cached.gap <= eps and cached.exact
    # both certified: each objective within eps of the other's lower bound
    assert cached.lower_bound <= plain.objective + 1e-9
    assert plain.lower_bound <= cached.objective + 1e-9
    assert abs(cached.objective - plain.objective) <= 2 * eps
    # the reported objective is F at the returned w (an exact evaluation)
    check = _oracle(seed)
    assert cached.objective == pytest.approx(lam * _reg(kind, check)(cached.w) + check(cached.w).value, abs=1e-10)


def test_cached_cuts_are_used_and_save_oracle_calls():
    lam, eps = 0.002, 1e-3
    plain = minimize(_oracle(5, n=150), L2(), lam, eps=eps, max_iter=3000)
    cached = minimize(_oracle(5, n=150), L2(), lam, eps=eps, max_iter=3000, cache_steps=10)
    assert cached.status == "converged" and cached.n_cached_cuts > 0 and cached.cache_time_s > 0
    assert cached.n_iter < plain.n_iter
    assert "cached cuts" in cached.summary()


def test_path_with_cached_cuts():
    lams = [1.0, 0.1, 0.01]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = regularization_path(_oracle(2), L2(), lams, eps=1e-4, cache_steps=5)
    for lam, res in zip(lams, path.results):
        cold = minimize(_oracle(2), L2(), lam, eps=1e-6)
        assert res.converged and res.lower_bound <= cold.objective + 1e-9
        assert abs(res.objective - cold.objective) <= 1e-4 + 1e-6


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_bad_cache_steps(bad):
    with pytest.raises(InputError) as err:
        minimize(_oracle(0), L2(), 0.1, cache_steps=bad)
    assert err.value.field == "cache_steps"


def test_cache_steps_needs_a_caching_oracle():
    rng = np.random.default_rng(0)
    oracle = BinaryHinge(rng.standard_normal((10, 3)), np.sign(rng.standard_normal(10)))
    with pytest.raises(InputError, match="cached_cut") as err:
        minimize(oracle, L2(), 0.1, cache_steps=3)
    assert err.value.field == "cache_steps"
    assert minimize(oracle, L2(), 0.1, cache_steps=0).converged
