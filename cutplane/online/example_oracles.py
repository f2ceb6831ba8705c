r"""Adapters from the package's structured oracles to SPOM's per-example protocol.

The protocol itself is :class:`cutplane.protocols.ExampleOracle` and its result type
:class:`cutplane.cuts.ExampleSubgradient` (both re-exported here).

SPOM (Martins et al. 2011, Alg. 3 lines 4-7) needs, for one training example ``i`` at the current ``w``,
the structured hinge ``L_i(w) = max_y [Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>]`` and a
subgradient ``g = Phi(x_i, y^_i) - Phi(x_i, y_i)`` from loss-augmented decoding.
The protocol::

    n_samples : int
    dim : int
    example_support(i) -> ndarray of int or None
        The coordinates of ``w`` that example ``i``'s decoding reads (sorted, unique); None
        means "all of w".
    example_subgradient(i, w_support) -> ExampleSubgradient
        ``L_i`` and its subgradient, given ``w`` restricted to ``example_support(i)``
        (in that order; the whole ``w`` when the support is None).

The support lets SPOM read only O(nnz) weights from its lazily scaled vector per round. An
oracle offering only a method on the full ``w`` is wrapped by :func:`as_example_oracle`:
``example_oracle(w, i) -> OracleResult`` (:class:`oracles.sequence.SequenceHingeOracle`) or
``loss_augmented(i, w) -> ExampleCut`` (:class:`oracles.parse_oracle.ParseOracle`); SPOM then
materialises ``w`` in O(dim) per round (correct, but slow on large problems). Nothing here
imports ``oracles``: the adapters are duck-typed (the engine knows no task).
"""

from __future__ import annotations

from cutplane.cuts import ExampleSubgradient, sparse_to_subgradient
from cutplane.exceptions import InputError
from cutplane.protocols import ExampleOracle

__all__ = ["ExampleSubgradient", "ExampleOracle", "as_example_oracle", "sparse_to_subgradient"]


class _FullVectorAdapter:
    """Wraps an oracle whose per-example method takes the full ``w`` (support = all of w)."""

    def __init__(self, oracle, call):
        self.oracle = oracle
        self._call = call
        self.n_samples = int(oracle.n_samples)
        self.dim = int(oracle.dim)

    def example_support(self, i):
        return None

    def example_subgradient(self, i, w_support) -> ExampleSubgradient:
        return self._call(int(i), w_support)

    def __repr__(self):
        return f"{type(self).__name__}({type(self.oracle).__name__}, n_samples={self.n_samples}, dim={self.dim})"


def _from_example_oracle(oracle):
    def call(i, w):
        res = oracle.example_oracle(w, i)
        return sparse_to_subgradient(res.value, res.cut.slope)

    return call


def _from_loss_augmented(oracle):
    def call(i, w):
        cut = oracle.loss_augmented(i, w)
        return sparse_to_subgradient(cut.value, -cut.dphi)

    return call


def as_example_oracle(oracle):
    """The per-example protocol for ``oracle``.

    Parameters
    ----------
    oracle : object
        Either already an :class:`ExampleOracle` (has ``example_subgradient`` and
        ``example_support``), or an oracle with ``n_samples``, ``dim`` and one of
        ``example_oracle(w, i) -> OracleResult`` or ``loss_augmented(i, w) -> ExampleCut``.

    Returns
    -------
    ExampleOracle

    Raises
    ------
    InputError
        When the object offers none of these.
    """
    if hasattr(oracle, "example_subgradient") and hasattr(oracle, "example_support"):
        return oracle
    for attr in ("n_samples", "dim"):
        if not hasattr(oracle, attr):
            raise InputError(
                f"{type(oracle).__name__} has no {attr!r}; SPOM needs a per-example oracle", field="oracle"
            )
    if hasattr(oracle, "example_oracle"):
        return _FullVectorAdapter(oracle, _from_example_oracle(oracle))
    if hasattr(oracle, "loss_augmented"):
        return _FullVectorAdapter(oracle, _from_loss_augmented(oracle))
    raise InputError(
        f"{type(oracle).__name__} offers no per-example method (example_subgradient, example_oracle or loss_augmented)",
        field="oracle",
    )
