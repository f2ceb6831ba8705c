"""Checkpoints in their compact form (format version 2): a fraction of the float64 CSR form's bytes,
the same state bit for bit, and a resumed run equal to an uninterrupted one.

The run is a sequence-labelling oracle (integer feature counts times ``1/n``: the slopes every
structured task gives), large enough that the slopes dominate the file."""

import json

import numpy as np
import pytest

from cutplane import minimize
from cutplane.checkpoint import FORMAT_VERSION, load_checkpoint, save_checkpoint
from cutplane.exceptions import ConvergenceWarning, ModelFormatError
from cutplane.fingerprint import fingerprint
from cutplane.regularizers import L2
from cutplane.working_set import working_set_state
from cutplane.working_set.state import expand_slopes
from oracles.sequence import SequenceHingeOracle

LAM = 1e-3


def chain_oracle(seed=0, n=150, n_features=400, K=5):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 12, size=n)
    sentence_ptr = np.concatenate([[0], np.cumsum(lengths)])
    n_tokens = int(sentence_ptr[-1])
    per = rng.integers(2, 6, size=n_tokens)
    indptr = np.concatenate([[0], np.cumsum(per)])
    indices = np.concatenate([np.sort(rng.choice(n_features, size=k, replace=False)) for k in per]).astype(np.int32)
    labels = (indices[indptr[:-1]] % K).astype(np.int32)  # learnable from the first feature
    return SequenceHingeOracle(indptr, indices, sentence_ptr, labels, n_features, K)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    path = tmp_path_factory.mktemp("ck") / "c.npz"
    with pytest.warns(ConvergenceWarning):
        minimize(chain_oracle(), L2(), LAM, eps=1e-9, max_iter=12, checkpoint=path, checkpoint_every=12)
    return path


def test_compact_checkpoint_is_a_fraction_of_the_csr_form(run):
    """The file is at most a third of what the float64 CSR slopes and dense vectors take (the
    format before version 2: 12 bytes a nonzero, 8 a coordinate of w and of best_w)."""
    oracle = chain_oracle()
    state = load_checkpoint(run, dim=oracle.dim, fingerprint=fingerprint(oracle, L2(), LAM, "bmrm", {}))
    nnz = state.working_set.matrix().nnz
    csr_form = 12 * nnz + 2 * 8 * oracle.dim
    assert nnz > 10_000
    assert run.stat().st_size <= csr_form / 3
    with np.load(run) as f:
        assert json.loads(str(f["__meta__"]))["format_version"] == FORMAT_VERSION == 2
        assert "ws_data" not in f.files and "ws_gaps" in f.files


def test_compact_slopes_read_back_bit_for_bit(run, tmp_path):
    oracle = chain_oracle()
    fp = fingerprint(oracle, L2(), LAM, "bmrm", {})
    state = load_checkpoint(run, dim=oracle.dim, fingerprint=fp)
    ws = state.working_set
    plain = working_set_state(ws)
    back = expand_slopes(working_set_state(ws, compact=True), oracle.dim)
    for k in ("ws_indptr", "ws_indices", "ws_data", "ws_offsets", "ws_duals", "ws_idle"):
        assert back[k].dtype == plain[k].dtype, k
        np.testing.assert_array_equal(back[k].view(np.uint8), plain[k].view(np.uint8), err_msg=k)
    # saved again and read back: the same state
    again = tmp_path / "again.npz"
    save_checkpoint(again, state, fingerprint=fp, method="bmrm")
    state2 = load_checkpoint(again, dim=oracle.dim, fingerprint=fp)
    np.testing.assert_array_equal(state2.w.view(np.uint64), state.w.view(np.uint64))
    np.testing.assert_array_equal(state2.best_w.view(np.uint64), state.best_w.view(np.uint64))
    A, B = ws.matrix(), state2.working_set.matrix()
    np.testing.assert_array_equal(A.indices, B.indices)
    np.testing.assert_array_equal(A.data.view(np.uint64), B.data.view(np.uint64))
    np.testing.assert_array_equal(ws.gram(), state2.working_set.gram())
    # a damaged compact part is refused, never half-read (a consistent zip whose payload is re-signed)
    with np.load(again) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays.pop("__meta__")))
    arrays["ws_row_kind"] = np.full_like(arrays["ws_row_kind"], 7)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays, __meta__=np.array(json.dumps(meta)))
    with pytest.raises(ModelFormatError):
        load_checkpoint(bad, dim=oracle.dim, fingerprint=fp)


def test_resume_from_the_compact_form_equals_the_uninterrupted_run(tmp_path):
    path = tmp_path / "c.npz"
    with pytest.warns(ConvergenceWarning):
        full = minimize(chain_oracle(1), L2(), LAM, eps=1e-3, max_iter=20)
    with pytest.warns(ConvergenceWarning):
        minimize(chain_oracle(1), L2(), LAM, eps=1e-3, max_iter=7, checkpoint=path, checkpoint_every=7)
    with pytest.warns(ConvergenceWarning):
        resumed = minimize(chain_oracle(1), L2(), LAM, eps=1e-3, max_iter=20, checkpoint=path, resume=True)
    assert resumed.n_iter == full.n_iter and resumed.status == full.status
    np.testing.assert_array_equal(resumed.w, full.w)
    np.testing.assert_array_equal(resumed.history.upper, full.history.upper)
    np.testing.assert_array_equal(resumed.history.lower, full.history.lower)
