"""Small structured models written only against the documented contract (oracles.structured).

Importable (``tests.oracles.structured_models``) so that the processes executor can pickle them.
Every model here has an output space small enough to enumerate (``outputs(x)``), for brute force.
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from oracles.structured import StructuredModel


class MultiLabelPairs(StructuredModel):
    """Multi-label classification with label-pair potentials.

    ``x`` an ndarray of shape (n_features,), ``y`` a 0/1 int ndarray of shape (n_labels,);
    ``Phi(x, y) = [y_l x for each label l] ++ [y_a y_b for each pair a < b]``; loss: the default
    (Hamming). argmax and loss-augmented argmax: the defaults (enumeration of ``outputs``).
    ``groups``: one group per label's block, one for the pairs.
    """

    def __init__(self, n_labels=3, n_features=2, sparse=False):
        self.n_labels, self.n_features, self.sparse = n_labels, n_features, sparse
        self.pairs = list(itertools.combinations(range(n_labels), 2))
        self.dim = n_labels * n_features + len(self.pairs)
        self.groups = np.concatenate(
            [np.repeat(np.arange(n_labels), n_features), np.full(len(self.pairs), n_labels)]
        ).astype(np.int64)

    def joint_feature(self, x, y):
        y = np.asarray(y, dtype=np.float64)
        unary = (y[:, None] * np.asarray(x, dtype=np.float64)[None, :]).ravel()
        pair = np.array([y[a] * y[b] for a, b in self.pairs])
        phi = np.concatenate([unary, pair])
        return sp.csr_matrix(phi.reshape(1, -1)) if self.sparse else phi

    def outputs(self, x):
        return [np.array(bits, dtype=np.int64) for bits in itertools.product((0, 1), repeat=self.n_labels)]


class TinyChain(StructuredModel):
    """A first-order chain with its own Viterbi (loss-augmented with the Hamming loss).

    ``x`` an ndarray of shape (T, n_features), ``y`` an int ndarray of shape (T,) in ``0..K-1``;
    ``Phi = [sum_t x_t (x) e_{y_t}] ++ [transition counts (K, K)]``, sparse rows.
    """

    def __init__(self, n_labels=2, n_features=2):
        self.K, self.n_features = n_labels, n_features
        self.dim = n_features * n_labels + n_labels * n_labels
        self.groups = np.concatenate([np.zeros(n_features * n_labels), np.ones(n_labels * n_labels)]).astype(int)

    def joint_feature(self, x, y):
        x = np.asarray(x, dtype=np.float64)
        K, d = self.K, self.n_features
        phi = np.zeros(self.dim)
        for t, label in enumerate(y):
            phi[label * d : (label + 1) * d] += x[t]
        for a, b in zip(y[:-1], y[1:]):
            phi[d * K + a * K + b] += 1.0
        return sp.csr_matrix(phi.reshape(1, -1))

    def loss(self, y, y_hat):
        return float(np.count_nonzero(np.asarray(y) != np.asarray(y_hat)))

    def _viterbi(self, x, w, y=None):
        x = np.asarray(x, dtype=np.float64)
        K, d = self.K, self.n_features
        unary = x @ w[: d * K].reshape(K, d).T  # (T, K)
        if y is not None:
            unary = unary + (np.arange(K)[None, :] != np.asarray(y)[:, None])
        trans = w[d * K :].reshape(K, K)
        T = x.shape[0]
        score = unary[0].copy()
        back = np.zeros((T, K), dtype=np.int64)
        for t in range(1, T):
            cand = score[:, None] + trans
            back[t] = np.argmax(cand, axis=0)
            score = cand[back[t], np.arange(K)] + unary[t]
        out = np.zeros(T, dtype=np.int64)
        out[-1] = int(np.argmax(score))
        for t in range(T - 1, 0, -1):
            out[t - 1] = back[t, out[t]]
        return out

    def argmax(self, x, w):
        return self._viterbi(x, w)

    def loss_augmented_argmax(self, x, y, w):
        return self._viterbi(x, w, y)

    def outputs(self, x):
        return [np.array(s, dtype=np.int64) for s in itertools.product(range(self.K), repeat=len(x))]


class Categories(StructuredModel):
    """Multiclass with string outputs (0/1 loss by default): outputs of any type with equality."""

    def __init__(self, labels=("a", "b", "c"), n_features=2):
        self.labels, self.n_features = tuple(labels), n_features
        self.dim = len(self.labels) * n_features

    def joint_feature(self, x, y):
        phi = np.zeros(self.dim)
        k = self.labels.index(y)
        phi[k * self.n_features : (k + 1) * self.n_features] = x
        return phi

    def outputs(self, x):
        return list(self.labels)


class WrongLength(MultiLabelPairs):
    """A joint feature one entry short."""

    def joint_feature(self, x, y):
        return np.asarray(super().joint_feature(x, y))[:-1]


class NonFinite(MultiLabelPairs):
    """A joint feature with an infinite entry for the all-ones output (the others are finite)."""

    def joint_feature(self, x, y):
        phi = np.array(super().joint_feature(x, y), dtype=np.float64)
        if np.all(np.asarray(y) == 1):
            phi[0] = np.inf
        return phi


class NegativeLoss(MultiLabelPairs):
    """A loss below zero for differing outputs."""

    def loss(self, y, y_hat):
        return -float(np.count_nonzero(np.asarray(y) != np.asarray(y_hat)))


class WorstArgmax(MultiLabelPairs):
    """A loss-augmented argmax that returns the least violated output (not the truth)."""

    def loss_augmented_argmax(self, x, y, w):
        best, best_score = None, np.inf
        for y_hat in self.outputs(x):
            if np.array_equal(y_hat, y):
                continue
            s = self.loss(y, y_hat) + float(np.dot(self.joint_feature(x, y_hat) - self.joint_feature(x, y), w))
            if s < best_score:
                best, best_score = y_hat, s
        return best


class ApproximateWorst(WorstArgmax):
    """:class:`WorstArgmax` declared approximate."""

    approximate = True


class NoArgmax(StructuredModel):
    """Only a joint feature: no outputs, no argmax."""

    dim = 2

    def joint_feature(self, x, y):
        return np.array([float(y), 0.0])


def random_data(model, n, rng, *, length=None):
    """``n`` random inputs and outputs of ``model`` (MultiLabelPairs, TinyChain or Categories).

    Parameters
    ----------
    rng : numpy.random.Generator
    length : int, optional
        Chain length (TinyChain); default random in 1..3.
    """
    X, Y = [], []
    for _ in range(n):
        if isinstance(model, TinyChain):
            T = int(length or rng.integers(1, 4))
            X.append(rng.normal(size=(T, model.n_features)))
            Y.append(rng.integers(0, model.K, size=T).astype(np.int64))
        elif isinstance(model, Categories):
            X.append(rng.normal(size=model.n_features))
            Y.append(model.labels[int(rng.integers(len(model.labels)))])
        else:
            X.append(rng.normal(size=model.n_features))
            Y.append(rng.integers(0, 2, size=model.n_labels).astype(np.int64))
    return X, Y


class Restricted(MultiLabelPairs):
    """The enumeration's argmax, leaving out the outputs listed in ``excluded`` (set by a test):
    not a maximiser once the best output is left out."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.excluded = []

    def loss_augmented_argmax(self, x, y, w):
        best, best_score = None, -np.inf
        for y_hat in self.outputs(x):
            if any(np.array_equal(y_hat, e) for e in self.excluded):
                continue
            s = self.loss(y, y_hat) + float(np.dot(self.joint_feature(x, y_hat), w))
            if s > best_score:
                best, best_score = y_hat, s
        return best


class ApproximateRestricted(Restricted):
    """:class:`Restricted` declared approximate."""

    approximate = True


class PairsBatch(MultiLabelPairs):
    """:class:`MultiLabelPairs` with the contract's batch forms (vectorised over the examples):
    ``batch_joint_feature`` a CSR matrix (``sparse``) or an ndarray, ``batch_loss`` the Hamming
    counts; the argmax is the enumeration's."""

    def batch_joint_feature(self, X, Y):
        Yf = np.asarray(Y, dtype=np.float64).reshape(len(Y), self.n_labels)
        Xf = np.asarray(X, dtype=np.float64).reshape(len(X), self.n_features)
        unary = (Yf[:, :, None] * Xf[:, None, :]).reshape(len(X), -1)
        pair = np.stack([Yf[:, a] * Yf[:, b] for a, b in self.pairs], axis=1).reshape(len(X), len(self.pairs))
        phi = np.concatenate([unary, pair], axis=1)
        return sp.csr_matrix(phi) if self.sparse else phi

    def batch_loss(self, Y, Y_hat):
        return np.count_nonzero(np.asarray(Y) != np.asarray(Y_hat), axis=1).astype(np.float64)


class BatchWrongShape(PairsBatch):
    """A batch joint feature one column short."""

    def batch_joint_feature(self, X, Y):
        return super().batch_joint_feature(X, Y)[:, :-1]


class BatchNonFinite(PairsBatch):
    """A batch joint feature with a NaN in the row of every all-ones output."""

    def batch_joint_feature(self, X, Y):
        phi = sp.lil_matrix(super().batch_joint_feature(X, Y))
        for j, y in enumerate(Y):
            if np.all(np.asarray(y) == 1):
                phi[j, 0] = np.nan
        return phi.tocsr()


class BatchNegativeLoss(PairsBatch):
    """A batch loss below zero for differing outputs."""

    def batch_loss(self, Y, Y_hat):
        return -super().batch_loss(Y, Y_hat)


class BatchDisagrees(PairsBatch):
    """A batch joint feature that is not the per-example one (twice it)."""

    def batch_joint_feature(self, X, Y):
        return 2.0 * super().batch_joint_feature(X, Y)


class PairsDifference(PairsBatch):
    """:class:`PairsBatch` with ``batch_joint_feature_difference`` computed directly (the unary
    block ``(y^_l - y_l) x``, the pair block ``y^_a y^_b - y_a y_b``)."""

    def batch_joint_feature_difference(self, X, Y, Y_hat):
        Yf = np.asarray(Y, dtype=np.float64).reshape(len(Y), self.n_labels)
        Hf = np.asarray(Y_hat, dtype=np.float64).reshape(len(Y_hat), self.n_labels)
        Xf = np.asarray(X, dtype=np.float64).reshape(len(X), self.n_features)
        unary = ((Hf - Yf)[:, :, None] * Xf[:, None, :]).reshape(len(X), -1)
        pair = np.stack([Hf[:, a] * Hf[:, b] - Yf[:, a] * Yf[:, b] for a, b in self.pairs], axis=1)
        diff = np.concatenate([unary, pair.reshape(len(X), len(self.pairs))], axis=1)
        return sp.csr_matrix(diff) if self.sparse else diff


class DifferenceWrong(PairsDifference):
    """A batch difference of the wrong sign."""

    def batch_joint_feature_difference(self, X, Y, Y_hat):
        return -super().batch_joint_feature_difference(X, Y, Y_hat)


class DifferenceNotZero(PairsDifference):
    """A batch difference that is not zero for ``y^ = y`` (one added to the first coordinate)."""

    def batch_joint_feature_difference(self, X, Y, Y_hat):
        diff = np.asarray(sp.csr_matrix(super().batch_joint_feature_difference(X, Y, Y_hat)).toarray())
        diff[:, 0] += 1.0
        return diff
