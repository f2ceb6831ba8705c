"""``regularization_path(keep_w=...)``: the path lets go of the ``w`` it is told to, and of
nothing else; the certificates, the warm starts and the points kept are those of a path that
keeps every ``w``."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import InputError, regularization_path
from cutplane.regularizers import L2, MixedNorm
from oracles.linear import BinaryHinge


def _binary(seed, n=40, d=6):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n))
    y[y == 0] = 1
    return BinaryHinge(sp.csr_matrix(X), y)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    kept=st.sets(st.integers(0, 3)),
    mixed=st.booleans(),
)
def test_only_the_points_not_kept_lose_their_w(seed, kept, mixed):
    oracle = _binary(seed)
    reg = MixedNorm(np.arange(oracle.dim) % 3, p=1.0, n_groups=3) if mixed else L2()
    lams = [10.0, 1.0, 0.1, 0.01]
    asked = []

    def keep_w(j):
        asked.append(j)
        return j in kept

    full = regularization_path(oracle, reg, lams, eps=1e-6, order="given")
    lean = regularization_path(oracle, reg, lams, eps=1e-6, order="given", keep_w=keep_w)
    last = len(lams) - 1
    for j, (a, b) in enumerate(zip(full.results, lean.results)):
        # the same runs: the warm starts (the carried w) are not changed by letting go
        assert b.objective == a.objective and b.lower_bound == a.lower_bound and b.n_iter == a.n_iter
        assert b.lower_bound <= b.objective and b.gap <= 1e-6 + 1e-12
        if j in kept or j == last:  # the last point is never asked about: it is the one that ran
            np.testing.assert_array_equal(b.w, a.w)
        else:
            assert b.w is None
    assert last not in asked and set(asked) <= set(range(last))


def test_an_added_point_starts_from_the_nearest_kept_w():
    oracle = _binary(3)
    seen = {}

    def extend(lams, results):
        return None if len(lams) > 3 else (20.0, 1e-6)

    def callback(info):
        if info.lam == 20.0 and "first" not in seen:
            seen["first"] = info.upper

    # lam = 10 is the nearest to 20 but its w is let go: the added point starts from lam = 1's
    path = regularization_path(
        oracle,
        L2(),
        [10.0, 1.0, 0.1],
        eps=1e-6,
        order="given",
        extend=extend,
        callback=callback,
        keep_w=lambda j: j == 1,
    )
    assert path.results[0].w is None and path.results[2].w is None
    w1 = path.results[1].w
    assert seen["first"] == pytest.approx(20.0 * L2()(w1) + oracle(w1).value, rel=1e-9)
    assert path.results[3].converged and path.results[3].w is not None


def test_keep_w_must_be_callable():
    with pytest.raises(InputError, match="callable") as info:
        regularization_path(_binary(0), L2(), [1.0], eps=1e-3, keep_w=True)
    assert info.value.field == "keep_w"
