"""cutplane.working_set.memory_budget and cutplane.bounds (helpers split out of the engine): the predicted size
after a cut against the real one, making room keeps a minorant of the cutting-plane model, and
the lower-bound bookkeeping's clipping and refusals."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.bounds import clip_lower, update_lower
from cutplane.cuts import Cut
from cutplane.exceptions import InputError
from cutplane.working_set import WorkingSet
from cutplane.working_set.memory_budget import bytes_after_add, fit_memory, slope_bytes


def _cuts(seed, n, dim, sparse):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        a = rng.standard_normal(dim) * (rng.random(dim) < 0.5)
        out.append(Cut(sp.csr_matrix(a[None, :]) if sparse else a, float(rng.standard_normal())))
    return out


def _model(ws, W):
    """max_r <a_r, w> + b_r at each row of W."""
    A = ws.matrix()
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    return np.max(W @ A.T + np.asarray(ws.offsets), axis=1)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(1, 40),
    dim=st.integers(1, 30),
    sparse=st.booleans(),
    grouped=st.booleans(),
)
def test_predicted_bytes_bound_the_real_ones(seed, n, dim, sparse, grouped):
    """Exact for dense slopes; an upper bound for sparse ones (16 bytes per nonzero assumed,
    whatever index width the working set picks)."""
    ws = WorkingSet(dim, groups=np.arange(dim) % 3 if grouped and dim >= 3 else None)
    for cut in _cuts(seed, n, dim, sparse):
        nb = slope_bytes(cut.slope)
        assert nb == (16 * cut.slope.nnz if sparse else 0)
        predicted = bytes_after_add(ws, nb)
        ws.add(cut)
        if sparse:
            assert ws.nbytes <= predicted
        elif ws.n_cuts > 1:
            assert ws.nbytes == predicted


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(2, 40),
    dim=st.integers(2, 20),
    sparse=st.booleans(),
    frac=st.floats(0.05, 1.0),
)
def test_fit_memory_makes_room_and_keeps_a_minorant(seed, n, dim, sparse, frac):
    ws = WorkingSet(dim)
    cuts = _cuts(seed, n, dim, sparse)
    for cut in cuts:
        ws.add(cut)
    rng = np.random.default_rng(seed + 1)
    ws.record_duals(rng.random(ws.n_cuts))
    W = rng.standard_normal((50, dim))
    before = _model(ws, W)
    nb = slope_bytes(cuts[-1].slope)
    limit = max(1, int(frac * bytes_after_add(ws, nb)))
    out = fit_memory(ws, limit, nb)
    assert bytes_after_add(out, nb) <= limit or out.n_cuts == 1
    # aggregated cuts are convex combinations: the model can only go down (the lower bound stays valid)
    assert np.all(_model(out, W) <= before + 1e-9 * (1 + np.abs(before)))
    if frac == 1.0:
        assert out.n_cuts == n


def test_update_and_clip_lower():
    assert update_lower(-np.inf, 1.0, 2.0, True, 0) == 1.0
    assert update_lower(1.5, 1.0, 2.0, True, 1) == 1.5  # running max
    assert update_lower(1.5, None, 2.0, True, 2) == 1.5
    assert update_lower(1.5, np.nan, 1.2, True, 2) == 1.2
    assert update_lower(1.0, 2.0 + 1e-9, 2.0, True, 3) == 2.0  # round-off above: clipped
    with pytest.raises(InputError, match="not minorants"):
        update_lower(1.0, 2.5, 2.0, True, 4)
    assert update_lower(1.0, 2.5, 2.0, False, 4) == 2.0  # inexact cuts: logged and clipped
    assert clip_lower(1.0, 2.0, True, 0) == 1.0
    assert clip_lower(2.0, 2.0 - 1e-9, True, 0) == 2.0 - 1e-9
    with pytest.raises(InputError, match="line search"):
        clip_lower(2.0, 1.0, True, 0)
    assert clip_lower(2.0, 1.0, False, 0) == 1.0
