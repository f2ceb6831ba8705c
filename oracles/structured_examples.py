"""The per-example view of a user's structured model that SPOM and PEGASOS read.

:class:`~oracles.structured.StructuredOracle` answers for the whole training set; the online
solvers (:func:`cutplane.online.spom`) take one example per round and need, for example ``i``
at the current ``w``, the structured hinge
``L_i(w) = max_y [Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>]`` and the subgradient
``Phi(x_i, y^_i) - Phi(x_i, y_i)`` (the protocol :class:`cutplane.protocols.ExampleOracle`).
Here both come from the model's ``loss_augmented_argmax(x_i, y_i, w)``, checked as the batch
oracle checks it (:class:`oracles.structured_chunk.StructuredChunk`).
"""

from __future__ import annotations

import numpy as np

from cutplane.cuts import ExampleSubgradient
from cutplane.exceptions import InputError

from .structured_chunk import StructuredChunk

__all__ = ["StructuredExampleOracle"]


class StructuredExampleOracle:
    """SPOM's per-example oracle of a structured model (:class:`cutplane.protocols.ExampleOracle`).

    ``example_support(i)`` is None (a user's argmax may read any coordinate of ``w``), so SPOM
    passes the whole ``w``; ``example_subgradient(i, w)`` calls the model's
    ``loss_augmented_argmax`` on example ``i`` and returns the hinge value and the sparse
    subgradient. The truth's joint feature of each example is computed once.

    Parameters
    ----------
    model : StructuredModel
    X, Y : list
        Inputs and true outputs.
    dim : int
        Length of the joint feature.
    check : bool, default=True
        Check the model's answers (:class:`oracles.structured_chunk.ModelChecks`).

    Attributes
    ----------
    n_samples, dim : int
    n_replaced : int
        Outputs of an approximate model replaced by the truth so far.
    """

    def __init__(self, model, X, Y, *, dim: int, check: bool = True):
        self._chunk = StructuredChunk(model, X, Y, 0, dim=dim, check=check)
        self.n_samples, self.dim = len(self._chunk), int(dim)
        self.n_replaced = 0

    @property
    def model(self):
        """The user's model."""
        return self._chunk.model

    def example_support(self, i):
        """None: the whole ``w`` (a model's argmax may read any coordinate)."""
        return None

    def example_subgradient(self, i, w_support) -> ExampleSubgradient:
        """``L_i(w)`` and its subgradient ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` at ``w = w_support``
        (ndarray of shape (dim,))."""
        i = int(i)
        if not 0 <= i < self.n_samples:
            raise InputError(f"example index {i} out of range [0, {self.n_samples})", field="i")
        w = np.asarray(w_support, dtype=np.float64)
        if w.shape != (self.dim,):
            raise InputError(f"w must have shape ({self.dim},), got {w.shape}", field="w")
        ch = self._chunk
        y_hat = ch.model.loss_augmented_argmax(ch.X[i], ch.Y[i], w)
        t = ch.terms(i, y_hat, w)
        self.n_replaced += int(t.replaced)
        return ExampleSubgradient(float(t.value), t.indices, t.values)

    def __repr__(self):
        return f"{type(self).__name__}({type(self.model).__name__}, n_samples={self.n_samples}, dim={self.dim})"
