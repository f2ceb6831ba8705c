"""The OCR letters as a chain model with one feature block per base kernel (SPOM sec. 4.1).

Each word of ``letter.data`` is a sequence; each character (a 16x8 binary image ``x``) gets the
concatenation of explicit feature maps, one block per base kernel of SPOM Table 1:

- ``"linear"``: ``x`` itself (128 features), kernel ``<x, x'>``;
- ``"quadratic"``: the exact feature map of ``(<x, x'> + 1)^2`` for binary inputs
  (:meth:`problems.mkl.kernels.PolynomialKernel.feature_map` with ``binary=True``:
  ``128 * 127 / 2 + 128 + 1 = 8257`` monomials, stored CSR: about 400 nonzeros per character);
- ``"gaussian"``: a Nystroem approximation (:class:`sklearn.kernel_approximation.Nystroem`,
  ``kernel="rbf"``, ``gamma = 1 / (2 sigma^2)``, ``sigma^2 = 5`` as in Table 1) with
  ``n_components`` landmarks drawn from the training characters (seeded); an approximation,
  not the exact Gaussian kernel.

With ``normalize=True`` every block of every character is scaled to unit Euclidean norm: the
unit-diagonal normalisation ``K(x, x') / sqrt(K(x, x) K(x', x'))`` of Table 1 (exact for the
explicit maps; for Nystroem the approximate map is normalised). The blocks are the groups of
:class:`oracles.dense_sequence.DenseSequenceOracle` (plus the transition block), so MKL over
``L + Q + G`` is ``MixedNorm(p=1)`` over them (SPOM, MTL^struct, the wrappers) and the
average kernel is plain L2 over the concatenation.

Folds: the file marks each word with a fold 0-9 (``OCRLetters.folds``); SPOM trains on one
fold and tests on the nine others (:func:`fold_split`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from cutplane.exceptions import InputError

__all__ = [
    "OCRWords",
    "ChainFeatures",
    "OCRChainFeaturizer",
    "load_ocr_letters",
    "fold_split",
    "select_words",
    "ocr_chain_oracle",
    "char_accuracy",
    "BLOCKS",
]

BLOCKS = ("linear", "quadratic", "gaussian")


@dataclass
class OCRWords:
    """A set of words: pixels and labels of their characters.

    Attributes
    ----------
    pixels : ndarray of shape (n_chars, 128), uint8
    labels : ndarray of shape (n_chars,), int32
    word_ptr : ndarray of shape (n_words + 1,), int64
        Word ``j`` is characters ``word_ptr[j]:word_ptr[j + 1]``.
    word_index : ndarray of shape (n_words,), int64
        Position of each word in the full file (for reproducibility).
    """

    pixels: np.ndarray
    labels: np.ndarray
    word_ptr: np.ndarray
    word_index: np.ndarray

    @property
    def n_words(self) -> int:
        return len(self.word_ptr) - 1

    @property
    def n_chars(self) -> int:
        return len(self.labels)


@dataclass
class ChainFeatures:
    """Token features of a set of words with their block layout.

    Attributes
    ----------
    X : csr_matrix of shape (n_chars, n_features)
    feature_groups : ndarray of shape (n_features,), intp
        Block id of every column (the order of ``block_names``).
    block_names : list of str
    """

    X: sp.csr_matrix
    feature_groups: np.ndarray
    block_names: list = field(default_factory=list)


def load_ocr_letters(path=None):
    """Read ``ocr-letters/letter.data.gz`` from the data folder (or ``path``)."""
    from problems.datasets import dataset_path
    from problems.io.ocr import read_ocr_letters

    return read_ocr_letters(dataset_path("ocr-letters", "letter.data.gz") if path is None else path)


def select_words(letters, word_index) -> OCRWords:
    """The words ``word_index`` (indices into ``letters.word_ptr``) as :class:`OCRWords`."""
    idx = np.asarray(word_index, dtype=np.int64)
    if idx.ndim != 1 or (idx.size and (idx.min() < 0 or idx.max() >= letters.n_words)):
        raise InputError(f"word indices must be in [0, {letters.n_words})", field="word_index")
    starts, ends = letters.word_ptr[idx], letters.word_ptr[idx + 1]
    lens = ends - starts
    chars = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends)]) if idx.size else np.zeros(0, np.int64)
    return OCRWords(
        pixels=letters.pixels[chars],
        labels=letters.labels[chars],
        word_ptr=np.concatenate([[0], np.cumsum(lens)]).astype(np.int64),
        word_index=idx,
    )


def fold_split(letters, fold, *, n_train_words=None, n_test_words=None, seed=0):
    """Train on the words of ``fold``, test on the words of the other folds (SPOM Table 1).

    Parameters
    ----------
    letters : OCRLetters
    fold : int
        0-9.
    n_train_words, n_test_words : int, optional
        Random subsamples of that many words (``np.random.default_rng(seed)``, kept in file
        order); default all.

    Returns
    -------
    train, test : OCRWords
    """
    if not 0 <= int(fold) <= 9:
        raise InputError(f"fold must be in 0..9, got {fold}", field="fold")
    rng = np.random.default_rng(seed)
    out = []
    for mask, size in ((letters.folds == fold, n_train_words), (letters.folds != fold, n_test_words)):
        idx = np.flatnonzero(mask)
        if size is not None and int(size) < idx.size:
            if int(size) < 1:
                raise InputError(f"subsample size must be >= 1, got {size}", field="n_train_words")
            idx = np.sort(rng.choice(idx, size=int(size), replace=False))
        out.append(select_words(letters, idx))
    return out[0], out[1]


def _unit_rows(M):
    """Rows scaled to unit Euclidean norm (zero rows left at zero)."""
    if sp.issparse(M):
        M = sp.csr_matrix(M, dtype=np.float64)
        nrm = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
        inv = np.divide(1.0, nrm, out=np.zeros_like(nrm), where=nrm > 0)
        return sp.csr_matrix(sp.diags(inv) @ M)
    M = np.asarray(M, dtype=np.float64)
    nrm = np.linalg.norm(M, axis=1)
    inv = np.divide(1.0, nrm, out=np.zeros_like(nrm), where=nrm > 0)
    return M * inv[:, None]


class OCRChainFeaturizer:
    """Per-character feature blocks for the OCR chain model.

    Parameters
    ----------
    blocks : sequence of {"linear", "quadratic", "gaussian"}, default=all three
    normalize : bool, default=True
        Unit norm per block and character (unit-diagonal kernels, SPOM Table 1).
    sigma2 : float, default=5.0
        Gaussian kernel ``exp(-||x - x'||^2 / (2 sigma2))``.
    n_components : int, default=500
        Nystroem landmarks of the Gaussian block (at most the number of training characters).
    seed : int or None, default=0
        ``random_state`` of Nystroem.
    """

    def __init__(self, blocks=BLOCKS, *, normalize=True, sigma2=5.0, n_components=500, seed=0):
        self.blocks = tuple(blocks)
        bad = [b for b in self.blocks if b not in BLOCKS]
        if not self.blocks or bad or len(set(self.blocks)) != len(self.blocks):
            raise InputError(f"blocks must be distinct names from {BLOCKS}, got {blocks!r}", field="blocks")
        if not (np.isfinite(sigma2) and sigma2 > 0):
            raise InputError(f"sigma2 must be > 0, got {sigma2}", field="sigma2")
        if int(n_components) != n_components or n_components < 1:
            raise InputError(f"n_components must be an integer >= 1, got {n_components}", field="n_components")
        self.normalize = bool(normalize)
        self.sigma2 = float(sigma2)
        self.n_components = int(n_components)
        self.seed = seed

    @staticmethod
    def _pixels(pixels):
        P = np.asarray(pixels)
        if P.ndim != 2 or P.shape[1] != 128 or not np.isin(P, (0, 1)).all():
            raise InputError(f"pixels must be a 0/1 array of shape (n, 128), got shape {P.shape}", field="pixels")
        return P.astype(np.float64)

    def fit(self, pixels):
        """Fit the Nystroem landmarks on training characters (nothing else is learned)."""
        P = self._pixels(pixels)
        if "gaussian" in self.blocks:
            from sklearn.kernel_approximation import Nystroem

            k = min(self.n_components, P.shape[0])
            self.nystroem_ = Nystroem(
                kernel="rbf", gamma=1.0 / (2.0 * self.sigma2), n_components=k, random_state=self.seed
            ).fit(P)
        self.fitted_ = True
        return self

    def transform(self, pixels) -> ChainFeatures:
        """The blocks of ``pixels`` (shape (n, 128)) as one CSR matrix with the block of every column."""
        from problems.mkl.kernels import PolynomialKernel

        if not getattr(self, "fitted_", False):
            raise NotFittedError("OCRChainFeaturizer is not fitted; call fit on the training characters first")
        P = self._pixels(pixels)
        mats, groups = [], []
        for j, name in enumerate(self.blocks):
            if name == "linear":
                M = sp.csr_matrix(P)
            elif name == "quadratic":
                M = PolynomialKernel(degree=2, coef0=1.0).feature_map(sp.csr_matrix(P), sparse=True, binary=True)
            else:
                M = self.nystroem_.transform(P)
            M = _unit_rows(M) if self.normalize else (sp.csr_matrix(M) if not sp.issparse(M) else M)
            mats.append(sp.csr_matrix(M))
            groups.append(np.full(M.shape[1], j, dtype=np.intp))
        X = sp.hstack(mats, format="csr")
        return ChainFeatures(X=X, feature_groups=np.concatenate(groups), block_names=list(self.blocks))

    def fit_transform(self, pixels) -> ChainFeatures:
        return self.fit(pixels).transform(pixels)


def ocr_chain_oracle(words: OCRWords, features: ChainFeatures, **kwargs):
    """A :class:`~oracles.dense_sequence.DenseSequenceOracle` of the words (26 labels, transitions last)."""
    from oracles.dense_sequence import DenseSequenceOracle

    if features.X.shape[0] != words.n_chars:
        raise InputError(
            f"features have {features.X.shape[0]} rows, the words {words.n_chars} characters", field="features"
        )
    return DenseSequenceOracle(
        features.X, words.labels, words.word_ptr, 26, feature_groups=features.feature_groups, **kwargs
    )


def char_accuracy(w, words: OCRWords, featurizer: OCRChainFeaturizer, *, batch_words=1000) -> float:
    """Per-character accuracy of Viterbi predictions with weights ``w`` (features built in batches)."""
    hits = 0
    for a in range(0, words.n_words, int(batch_words)):
        b = min(a + int(batch_words), words.n_words)
        c0, c1 = int(words.word_ptr[a]), int(words.word_ptr[b])
        part = OCRWords(words.pixels[c0:c1], words.labels[c0:c1], words.word_ptr[a : b + 1] - c0, words.word_index[a:b])
        oracle = ocr_chain_oracle(part, featurizer.transform(part.pixels))
        hits += int(np.count_nonzero(oracle.decode(w) == part.labels))
    return hits / max(words.n_chars, 1)
