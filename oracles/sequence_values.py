"""Real-valued features of the sequence-labelling oracle: a value per feature occurrence.

With a float value ``v_p`` beside each feature id ``f_p`` of a token (CRFsuite's attribute
values), the joint feature of :mod:`oracles.sequence` becomes

    Phi(x, y) = sum_t sum_{p in feats(t)} v_p e_{f_p} (x) e_{y_t}  +  sum_{t>=1} e_{y_{t-1}} (x) e_{y_t},

so the unary score of label ``k`` at token ``t`` is ``sum_p v_p W[f_p, k]`` and the cut sums
``v_p`` where the indicator features add 1. :class:`ValuedSequenceChunk` is the chunk task of
:class:`~oracles.sequence.SequenceHingeOracle` when it is given ``values``; without them the
oracle keeps :class:`~oracles.sequence_chunk.SequenceChunk` and its integer kernels unchanged.

Both run the kernels of :mod:`oracles.sequence_chunk` (and :func:`oracles.viterbi.sentence_unary`),
which take the values as an argument: None for indicator features, a specialisation of its own
that numba compiles without the branches reading them. The sums are floats, not integer counts,
so a valued chunk builds every cut afresh from the gold labels (the integer chunk's incremental
update from its last cut is exact only for integer counts), and its cut accumulates in float64.
"""

from __future__ import annotations

from .sequence_chunk import SequenceChunk

__all__ = ["ValuedSequenceChunk"]


class ValuedSequenceChunk(SequenceChunk):
    """:class:`~oracles.sequence_chunk.SequenceChunk` with a float value per feature occurrence:
    the same calls, caches and answers, with the unary scores and the cuts weighted by the values.
    Every cut is built afresh (float sums).

    Parameters
    ----------
    indptr, indices : ndarrays
        Feature ids per token (CSR), as for :class:`~oracles.sequence_chunk.SequenceChunk`.
    values : ndarray of shape (len(indices),), float64
        The value of each feature occurrence.
    sentence_ptr, labels, s0, s1, n_features, n_labels, transitions
        As for :class:`~oracles.sequence_chunk.SequenceChunk`.
    """

    def __init__(self, indptr, indices, values, sentence_ptr, labels, s0, s1, n_features, n_labels, transitions):
        super().__init__(indptr, indices, sentence_ptr, labels, s0, s1, n_features, n_labels, transitions)
        self.values = values

    def __getstate__(self):
        state = super().__getstate__()
        t0, t1 = int(self.sentence_ptr[self.s0]), int(self.sentence_ptr[self.s1])
        state["values"] = state["values"][int(self.indptr[t0]) : int(self.indptr[t1])]
        return state
