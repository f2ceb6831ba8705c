r"""The per-example protocol of kernelised SPOM over precomputed Gram matrices (Martins et al. 2011, sec. 3.4).

:class:`PrecomputedKernelExamples` holds the training Gram matrices ``K_m`` (one per group,
sparse ones kept sparse) and the labels of a binary or multiclass hinge, and gives what a
round of an online method over kernel expansions (kernelised SPOM) needs about example ``i``: the coefficients its
scores read (:meth:`~PrecomputedKernelExamples.example_support`), the loss-augmented decoding
and the subgradient in coefficient space with the terms of eq. (17) of Martins et al. 2011
(:meth:`~PrecomputedKernelExamples.example_subgradient`, a :class:`KernelSubgradient`); and for
the whole data set the exact group norms ``||theta_m||^2 = sum_y A_m[:, y]^T K_m A_m[:, y]`` and
the hinge of every example. Coefficient ``A_m[j, y]`` sits at ``(m * n + j) * K + y``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError

__all__ = ["PrecomputedKernelExamples", "KernelSubgradient"]


_LOSSES = ("binary", "multiclass")


class KernelSubgradient(NamedTuple):
    """One example's hinge and its subgradient in coefficient space, with the eq. (17) terms.

    Attributes
    ----------
    value : float
        ``L_i``.
    indices : ndarray of shape (nnz,), int64
        Coefficients the gradient step changes (unique).
    values : ndarray of shape (nnz,)
        The step is ``coef[indices] -= eta * values``.
    inner : ndarray of shape (n_kernels,)
        ``<theta_m, g_m>`` per group.
    sqnorm : ndarray of shape (n_kernels,)
        ``||g_m||^2`` per group.
    """

    value: float
    indices: np.ndarray
    values: np.ndarray
    inner: np.ndarray
    sqnorm: np.ndarray


def _check_grams(grams):
    if isinstance(grams, np.ndarray) and grams.ndim == 3:
        grams = list(grams)
    if not isinstance(grams, (list, tuple)) or len(grams) == 0:
        raise InputError("grams must be a non-empty list of (n, n) Gram matrices", field="grams")
    out: list = []
    for m, G in enumerate(grams):
        G = sp.csr_matrix(G, dtype=np.float64) if sp.issparse(G) else np.ascontiguousarray(G, dtype=np.float64)
        if G.ndim != 2 or G.shape[0] != G.shape[1]:
            raise InputError(f"Gram matrix {m} has shape {G.shape}, expected square", field="grams")
        if out and G.shape != out[0].shape:
            raise InputError(f"Gram matrix {m} has shape {G.shape} but Gram matrix 0 has {out[0].shape}", field="grams")
        data = G.data if sp.issparse(G) else G
        if not np.all(np.isfinite(data)):
            raise InputError(f"Gram matrix {m} has non-finite entries", field="grams")
        if isinstance(G, sp.csr_matrix):  # the sparse case, converted above
            G.sum_duplicates()
            G.sort_indices()
        out.append(G)
    return out


class PrecomputedKernelExamples:
    """SPOM's per-example protocol over the coefficient vector of a kernel expansion.

    The coefficient vector has ``dim = n_kernels * n * K`` entries, coefficient ``A_m[j, y]``
    at ``(m * n + j) * K + y`` (group ``m``); :meth:`example_support` lists those example ``i``'s
    scores read (rows ``j`` with ``K_m[i, j] != 0``, all ``y``), :meth:`example_subgradient`
    decodes and returns a :class:`KernelSubgradient`.

    Parameters
    ----------
    grams : list of ndarray or scipy.sparse matrix, each of shape (n, n)
        Training Gram matrices ``K_m``, one per group (sparse ones stay sparse).
    y : array-like of shape (n,)
        Class labels.
    loss : {"binary", "multiclass"} or None, default=None
        None: binary hinge for two classes, multiclass (0/1 cost) otherwise.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_samples, dim, n_kernels, n_outputs : int
        ``n_outputs`` is ``K`` (1 for the binary hinge).
    """

    def __init__(self, grams, y, *, loss=None):
        self.grams = _check_grams(grams)
        n = self.grams[0].shape[0]
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n:
            raise InputError(f"y must have shape ({n},), got {y.shape}", field="y")
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise InputError("y has a single class", field="y")
        if loss is None:
            loss = "binary" if self.classes_.size == 2 else "multiclass"
        if loss not in _LOSSES:
            raise InputError(f"loss must be one of {_LOSSES}, got {loss!r}", field="loss")
        if loss == "binary" and self.classes_.size != 2:
            raise InputError(f"loss='binary' needs two classes, y has {self.classes_.size}", field="y")
        self.loss = loss
        self.n_samples, self.n_kernels = n, len(self.grams)
        self.n_outputs = 1 if loss == "binary" else int(self.classes_.size)
        self.dim = self.n_kernels * n * self.n_outputs
        self.codes = codes.astype(np.int64)
        self.sign = np.where(self.codes == 1, 1.0, -1.0)
        self.diag = np.stack([np.asarray(G.diagonal(), dtype=np.float64) for G in self.grams])
        self._outs = np.arange(self.n_outputs, dtype=np.int64)

    # ------------------------------------------------------------------ per example
    def _row(self, m, i):
        G = self.grams[m]
        if sp.issparse(G):
            a, b = G.indptr[i], G.indptr[i + 1]
            return G.indices[a:b].astype(np.int64), G.data[a:b]
        return None, G[i]

    def example_support(self, i):
        K, n = self.n_outputs, self.n_samples
        parts = []
        for m in range(self.n_kernels):
            cols, _ = self._row(m, int(i))
            rows = m * n + (np.arange(n, dtype=np.int64) if cols is None else cols)
            parts.append((rows[:, None] * K + self._outs).ravel())
        return np.concatenate(parts)

    def group_scores(self, i, coef_support) -> np.ndarray:
        """``f_m(x_i, y)`` for every group and output: ndarray of shape (n_kernels, K)."""
        K = self.n_outputs
        out = np.empty((self.n_kernels, K))
        pos = 0
        for m in range(self.n_kernels):
            _, vals = self._row(m, int(i))
            seg = coef_support[pos : pos + vals.size * K]
            pos += vals.size * K
            out[m] = vals @ seg.reshape(vals.size, K)
        return out

    def example_subgradient(self, i, coef_support) -> KernelSubgradient:
        i = int(i)
        n, K, M = self.n_samples, self.n_outputs, self.n_kernels
        f = self.group_scores(i, coef_support)
        base = (np.arange(M, dtype=np.int64) * n + i) * K
        if self.loss == "binary":
            s = self.sign[i]
            value = 1.0 - s * float(f[:, 0].sum())
            if not value > 0:
                return KernelSubgradient(0.0, np.empty(0, np.int64), np.empty(0), np.zeros(M), np.zeros(M))
            # L = 1 - y <theta, psi(x_i)>: g_m = -y psi_m(x_i), coefficient -y at (m, i)
            return KernelSubgradient(value, base, np.full(M, -s), -s * f[:, 0], self.diag[:, i].copy())
        yi = int(self.codes[i])
        total = f.sum(axis=0)
        aug = (self._outs != yi) + total - total[yi]
        yhat = int(np.argmax(aug))
        if yhat == yi:
            return KernelSubgradient(0.0, np.empty(0, np.int64), np.empty(0), np.zeros(M), np.zeros(M))
        # g_m = phi_m(x_i, y^) - phi_m(x_i, y_i): +1 at (m, i, y^), -1 at (m, i, y_i)
        idx = np.concatenate([base + yhat, base + yi])
        vals = np.concatenate([np.ones(M), -np.ones(M)])
        return KernelSubgradient(float(aug[yhat]), idx, vals, f[:, yhat] - f[:, yi], 2.0 * self.diag[:, i])

    # ------------------------------------------------------------------ whole data set
    def as_table(self, coef) -> np.ndarray:
        """The coefficient vector as ndarray of shape (n_kernels, n, K)."""
        return np.asarray(coef, dtype=np.float64).reshape(self.n_kernels, self.n_samples, self.n_outputs)

    def products(self, coef) -> np.ndarray:
        """``K_m A_m`` for every group: ndarray of shape (n_kernels, n, K)."""
        A = self.as_table(coef)
        return np.stack([np.asarray(G @ A[m]) for m, G in enumerate(self.grams)])

    def group_sqnorms(self, coef, products=None) -> np.ndarray:
        """``||theta_m||^2 = sum_y A_m[:, y]^T K_m A_m[:, y]``: ndarray of shape (n_kernels,), exact."""
        P = self.products(coef) if products is None else products
        return np.maximum(np.einsum("mjk,mjk->m", self.as_table(coef), P), 0.0)

    def losses(self, scores) -> np.ndarray:
        """Hinge of every example from total scores of shape (n, K): ndarray of shape (n,)."""
        n = self.n_samples
        if self.loss == "binary":
            return np.maximum(0.0, 1.0 - self.sign * scores[:, 0])
        gold = scores[np.arange(n), self.codes]
        aug = (self._outs[None, :] != self.codes[:, None]) + scores - gold[:, None]
        return aug.max(axis=1)
