"""The per-sentence view of the parse oracle that SPOM reads (:class:`ParseExampleOracle`).

:class:`~oracles.parse_oracle.ParseOracle` answers for the whole training set; SPOM
(:func:`cutplane.online.spom`) takes one sentence per round through the protocol
:class:`cutplane.protocols.ExampleOracle`. Here a round runs the parse oracle's loss-augmented
decoder on one sentence with its features renumbered ``0..n_i - 1``, so it costs O(arcs of the
sentence), never O(dim).
"""

from __future__ import annotations

import numpy as np

from cutplane.cuts import ExampleSubgradient

from .parse_oracle import ArcFeatures, ParseOracle

__all__ = ["ParseExampleOracle"]


class ParseExampleOracle:
    """SPOM's per-sentence view of a parsing training set.

    ``example_support(i)`` is the sorted list of features on the arcs of sentence ``i``;
    ``example_subgradient(i, w_support)`` runs the loss-augmented decoder on that sentence with
    its features renumbered (one :class:`~oracles.parse_oracle.ParseOracle` over a copy of the
    arc features with local ids, built once). The value is the sentence's structured hinge, the
    subgradient ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` in global coordinates.

    Parameters
    ----------
    features : oracles.parse_oracle.ArcFeatures
    trees : list of ndarray of shape (n_i + 1,)
        Gold heads.
    projective, single_root, normalize_loss : bool
        As in :class:`oracles.parse_oracle.ParseOracle`.
    """

    def __init__(self, features, trees, *, projective, single_root, normalize_loss):
        f = features
        self.n_samples, self.dim = int(f.n_sentences), int(f.dim)
        starts = f.indptr[f.arc_ptr]
        local = np.empty_like(f.indices)
        ufs = []
        for i in range(self.n_samples):
            a, b = int(starts[i]), int(starts[i + 1])
            uf, inv = np.unique(f.indices[a:b], return_inverse=True)
            ufs.append(uf.astype(np.int64))
            local[a:b] = inv
        self._uf = ufs
        self._width = max(1, max((u.size for u in ufs), default=1))
        self._local = ParseOracle(
            ArcFeatures(f.lengths, f.arc_ptr, f.indptr, local, self._width),
            trees,
            projective=projective,
            single_root=single_root,
            normalize_loss=normalize_loss,
        )

    def example_support(self, i):
        """Sorted features on the arcs of sentence ``i``."""
        return self._uf[i]

    def example_subgradient(self, i, w_support) -> ExampleSubgradient:
        """The hinge of sentence ``i`` and its subgradient, from ``w`` on :meth:`example_support`."""
        uf = self._uf[i]
        w = np.zeros(self._width)
        w[: uf.size] = w_support
        cut = self._local.loss_augmented(int(i), w)
        row = cut.dphi.tocsr()
        row.sum_duplicates()
        row.eliminate_zeros()
        return ExampleSubgradient(float(cut.value), uf[row.indices], -row.data.astype(np.float64))

    def __repr__(self):
        return f"{type(self).__name__}(n_samples={self.n_samples}, dim={self.dim})"
