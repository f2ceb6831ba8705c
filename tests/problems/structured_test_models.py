"""Tiny structured models whose outputs can be enumerated, for the StructuredSVM tests.

Importable by name (``tests.problems.structured_test_models``), so that a process executor can
pickle them and a saved model file can name their class.
"""

from __future__ import annotations

import itertools

import numpy as np

from oracles.structured import StructuredModel


class MultiLabelPairs(StructuredModel):
    """Multi-label classification with label-pair potentials, decoded by enumeration.

    ``x`` is a feature vector of shape (n_features,), ``y`` a 0/1 int array of shape
    (n_labels,). The joint feature is one block ``y_l * x`` per label, then one coordinate
    ``y_k * y_l`` per pair ``k < l``; the groups are one per label block and one for the pairs.
    The loss is the contract's default (Hamming).
    """

    def __init__(self, n_features, n_labels, pairs=True):
        self.n_features = int(n_features)
        self.n_labels = int(n_labels)
        self.pairs = bool(pairs)
        self._pair_index = list(itertools.combinations(range(self.n_labels), 2)) if self.pairs else []
        self.dim = self.n_features * self.n_labels + len(self._pair_index)
        self.groups = np.concatenate(
            [np.repeat(np.arange(self.n_labels), self.n_features), np.full(len(self._pair_index), self.n_labels)]
        ).astype(np.int64)
        self._outputs = np.array(list(itertools.product((0, 1), repeat=self.n_labels)), dtype=np.int64)

    def joint_feature(self, x, y):
        y = np.asarray(y)
        unary = (y[:, None] * np.asarray(x, dtype=np.float64)[None, :]).ravel()
        pair = np.array([float(y[a] * y[b]) for a, b in self._pair_index])
        return np.concatenate([unary, pair])

    def _scores(self, x, w):
        return np.array([w @ self.joint_feature(x, y) for y in self._outputs])

    def argmax(self, x, w):
        return self._outputs[int(np.argmax(self._scores(x, w)))].copy()

    def loss_augmented_argmax(self, x, y, w):
        losses = np.sum(self._outputs != np.asarray(y)[None, :], axis=1)
        return self._outputs[int(np.argmax(self._scores(x, w) + losses))].copy()


class MultiLabelWithParams(MultiLabelPairs):
    """The same model with scikit-learn's ``get_params`` (what a model file stores)."""

    def __init__(self, n_features, n_labels, pairs=True):
        super().__init__(n_features, n_labels, pairs)

    def get_params(self, deep=True):
        return {"n_features": self.n_features, "n_labels": self.n_labels, "pairs": self.pairs}


class Incomplete:
    """Not a structured model: no ``loss_augmented_argmax`` and no ``dim``."""

    def joint_feature(self, x, y):
        return np.zeros(1)

    def argmax(self, x, w):
        return 0

    def loss(self, y, y_hat):
        return float(y != y_hat)


def make_multilabel(n_samples, *, n_features=3, n_labels=3, noise=0.1, seed=0, model=None):
    """Examples of :class:`MultiLabelPairs`: inputs drawn at random, outputs the argmax of a
    random ``w``, a share ``noise`` of the labels flipped.

    Returns
    -------
    model : MultiLabelPairs
    X : list of ndarray of shape (n_features,)
    Y : list of ndarray of int of shape (n_labels,)
    """
    rng = np.random.default_rng(seed)
    model = MultiLabelPairs(n_features, n_labels) if model is None else model
    w = rng.normal(size=model.dim)
    X = [rng.normal(size=n_features) for _ in range(n_samples)]
    Y = []
    for x in X:
        y = model.argmax(x, w)
        flip = rng.random(n_labels) < noise
        Y.append(np.where(flip, 1 - y, y).astype(np.int64))
    return model, X, Y


def exact_match(Y_true, Y_pred):
    """The share of outputs predicted exactly (a ``scoring`` callable importable by name)."""
    return float(np.mean([np.array_equal(a, b) for a, b in zip(Y_true, Y_pred)]))
