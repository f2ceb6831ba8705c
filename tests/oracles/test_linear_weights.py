"""Sample weights of the hinge oracles: a weight s_i is example i's loss counted s_i times."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.linear import BinaryHinge, MulticlassHinge


def _data(seed, kind, n=12, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, -1, 1) if kind == "binary" else rng.integers(0, 3, n)
    if kind != "binary":
        y[:3] = [0, 1, 2]
    s = rng.integers(0, 4, n)
    s[0] = max(s[0], 1)
    return X, y, s, rng


def _make(kind, X, y, s=None):
    return BinaryHinge(X, y, sample_weight=s) if kind == "binary" else MulticlassHinge(X, y, 3, sample_weight=s)


@settings(max_examples=60)
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["binary", "multi"]))
def test_integer_weights_equal_repeated_examples(seed, kind):
    X, y, s, rng = _data(seed, kind)
    weighted = _make(kind, X, y, s.astype(float))
    repeated = _make(kind, np.repeat(X, s, axis=0), np.repeat(y, s))
    scale = repeated.n_samples / weighted.n_samples  # both are (1/n) sums over their own n
    w = rng.standard_normal(weighted.dim)
    a, b = weighted(w), repeated(w)
    np.testing.assert_allclose(a.value, b.value * scale, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(a.cut.slope, b.cut.slope * scale, rtol=1e-12, atol=1e-13)
    # per-example cuts sum to the 1-slack cut
    ex = weighted.example_cuts(w)
    np.testing.assert_allclose(ex.values.sum() / weighted.n_samples, a.value, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(ex.slopes.sum(axis=0)).ravel() / weighted.n_samples, a.cut.slope, atol=1e-12)
    # the line-search pieces give the risk on the line
    d = rng.standard_normal(weighted.dim)
    off, slo = weighted.line_search_pieces(w, d)
    for k in (0.0, 0.5, 3.0):
        np.testing.assert_allclose(np.max(off + k * slo, axis=1).sum(), weighted(w + k * d).value, atol=1e-12)


def test_bad_weights_refused():
    with pytest.raises(InputError) as err:
        BinaryHinge(np.eye(2), [1, -1], sample_weight=[1.0, -1.0])
    assert err.value.field == "sample_weight"
    with pytest.raises(InputError, match="all weights are zero"):
        MulticlassHinge(np.eye(2), [0, 1], sample_weight=[0.0, 0.0])
