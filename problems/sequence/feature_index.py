"""Apply CRF++ templates to a corpus: the feature dictionary, per-token feature ids, labels.

The joint feature map of a first-order chain is

    Phi(x, y) = sum_t psi(x, t) (x) e_{y_t}  +  sum_{t>=1} e_{y_{t-1}} (x) e_{y_t}

where ``psi(x, t)`` is the 0/1 indicator of the unigram features firing at token ``t``.
The weight vector is laid out as ``w = concat(W.ravel(), T.ravel())`` with ``W`` of shape
(n_features, n_labels) (row-major: coordinate ``f * n_labels + k``) and ``T`` of shape
(n_labels, n_labels), ``T[a, b]`` the score of label ``a`` followed by ``b`` (row = previous
label). The transition block exists only when the templates contain a ``B`` template.

Features of template ``j`` get contiguous ids, so group ``j`` (MTL's template group) is a
contiguous block of rows of ``W``; the transition block is the ``B`` template's own group.
Per-token feature ids are stored CSR-like (``indptr``, ``indices``), never one-hot.

Predict-time policy (see :mod:`problems.validation`): a feature string not in the fitted
dictionary is ignored by :meth:`FeatureIndex.transform` (it has no weight), as CRF++ does; a
label never seen in training is an error when encoding training data
(:meth:`LabelAlphabet.encode`) and, in gold labels used for evaluation, is encoded as ``-1``
with one warning listing such labels (:meth:`LabelAlphabet.encode_unseen`), so it is scored as
wrong and never crashes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import repeat
from typing import NamedTuple

import numpy as np
from sklearn.exceptions import NotFittedError

from cutplane.exceptions import InputError
from problems.sequence.templates import Template, parse_templates

__all__ = ["SequenceFeatures", "FeatureIndex", "LabelAlphabet"]


class SequenceFeatures(NamedTuple):
    """Per-token feature ids of a corpus of sentences, concatenated.

    Attributes
    ----------
    indptr : ndarray of shape (n_tokens + 1,), int64
        Token ``t``'s feature ids are ``indices[indptr[t]:indptr[t + 1]]``.
    indices : ndarray of shape (nnz,), int32
        Feature ids, increasing within a token.
    sentence_ptr : ndarray of shape (n_sentences + 1,), int64
        Sentence ``i`` is tokens ``sentence_ptr[i]:sentence_ptr[i + 1]``.
    n_features : int
        Size of the feature dictionary.
    """

    indptr: np.ndarray
    indices: np.ndarray
    sentence_ptr: np.ndarray
    n_features: int

    @property
    def n_sentences(self) -> int:
        return len(self.sentence_ptr) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.indptr) - 1

    def to_csr(self):
        """The (n_tokens, n_features) 0/1 scipy CSR matrix (for inspection and tests)."""
        import scipy.sparse as sp

        data = np.ones(len(self.indices), dtype=np.float64)
        return sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n_tokens, self.n_features))


class LabelAlphabet:
    """A label set and its integer codes.

    Parameters
    ----------
    labels : sequence of str
        The labels; code ``k`` is ``labels[k]``. Duplicates are an error.
    """

    def __init__(self, labels: Sequence[str]):
        self.labels = list(labels)
        self.index = {lab: k for k, lab in enumerate(self.labels)}
        if len(self.index) != len(self.labels):
            raise InputError("duplicate labels in the label set", field="labels")

    @classmethod
    def fit(cls, label_sequences) -> LabelAlphabet:
        """The sorted set of labels seen in ``label_sequences`` (sequences of str)."""
        seen = set()
        for seq in label_sequences:
            seen.update(seq)
        return cls(sorted(seen))

    def __len__(self) -> int:
        return len(self.labels)

    def encode(self, labels: Sequence[str], *, path=None, line: int | None = None) -> np.ndarray:
        """Codes of one label sequence, int32 of shape (len(labels),).

        Parameters
        ----------
        labels : sequence of str
        path : str, optional
            File the labels came from (for the error message).
        line : int, optional
            Line of ``labels[0]`` in ``path``; label ``t`` is on line ``line + t``.

        Raises
        ------
        InputError
            A label not in the set, naming the file and line when given.
        """
        index = self.index
        try:
            return np.fromiter((index[lab] for lab in labels), dtype=np.int32, count=len(labels))
        except KeyError:
            for t, lab in enumerate(labels):
                if lab not in index:
                    raise InputError(
                        f"unknown label {lab!r}; expected one of {self.labels}",
                        path=path,
                        line=None if line is None else line + t,
                        field="label",
                    ) from None
            raise  # pragma: no cover

    def encode_unseen(self, label_sequences, *, path=None) -> np.ndarray:
        """Codes of gold labels for evaluation: labels not in the set become ``-1``.

        No code equals ``-1``, so such a token is scored as wrong against any prediction.
        One :class:`problems.validation.UnseenLabelWarning` lists the unseen labels and their
        counts (none when every label is known).

        Parameters
        ----------
        label_sequences : sequence of sequences of str
        path : str, optional
            File the labels came from (named in the warning).

        Returns
        -------
        ndarray of shape (n_tokens,), int32
            Concatenated codes.
        """
        from problems.validation import warn_unseen_labels

        label_sequences = [list(seq) for seq in label_sequences]
        warn_unseen_labels(label_sequences, self.index, path=path, stacklevel=3)
        get = self.index.get
        n = sum(len(seq) for seq in label_sequences)
        return np.fromiter((get(lab, -1) for seq in label_sequences for lab in seq), dtype=np.int32, count=n)

    def encode_corpus(self, label_sequences, *, path=None, first_lines=None) -> np.ndarray:
        """Codes of a corpus, concatenated: int32 of shape (n_tokens,)."""
        parts = [
            self.encode(seq, path=path, line=None if first_lines is None else first_lines[i])
            for i, seq in enumerate(label_sequences)
        ]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)

    def decode(self, codes) -> list[str]:
        """Labels of integer codes."""
        return [self.labels[int(k)] for k in codes]


def _columns(sentence, n_needed: int, i: int):
    """Column-major view of one sentence (list of token rows), checking the column count."""
    cols = list(zip(*sentence))
    if sentence and len(cols) < n_needed:
        short = min(len(row) for row in sentence)
        raise InputError(
            f"sentence {i}: a token has {short} input columns, the templates need {n_needed}", field="columns"
        )
    return cols


class FeatureIndex:
    """The feature dictionary of a set of templates, fitted on a corpus.

    Parameters
    ----------
    templates : str or list of Template
        Template text (CRF++ syntax) or parsed templates.
    min_count : int, default=1
        Features seen fewer than ``min_count`` times in the fitting corpus are dropped
        (CRF++'s ``-f``).

    Notes
    -----
    :meth:`transform` ignores feature strings absent from the dictionary (unseen in training
    or dropped by ``min_count``): a token whose features are all unseen gets no unigram
    feature and is labelled by the transitions alone.

    Attributes
    ----------
    templates : list of Template
    vocabulary_ : dict of str to int
        Feature string -> feature id.
    feature_groups_ : ndarray of shape (n_features,), int32
        Template index (group) of each feature.
    group_offsets_ : ndarray of shape (n_templates + 1,), int64
        Features of template ``j`` are ids ``group_offsets_[j]:group_offsets_[j + 1]``.
    feature_counts_ : ndarray of shape (n_features,), int64
        Occurrences of each kept feature in the fitting corpus.
    n_features_ : int
    """

    def __init__(self, templates, *, min_count: int = 1):
        self.templates = parse_templates(templates) if isinstance(templates, str) else list(templates)
        if not all(isinstance(t, Template) for t in self.templates):
            raise InputError("templates must be template text or a list of Template", field="templates")
        from problems.validation import check_int

        self.min_count = check_int(min_count, "min_count")
        self._unigram = [j for j, t in enumerate(self.templates) if t.kind == "U"]
        self._n_columns = 1 + max((t.max_column for t in self.templates), default=-1)

    # -- properties ------------------------------------------------------------------------
    @property
    def template_names(self) -> list[str]:
        return [t.name for t in self.templates]

    @property
    def has_transitions(self) -> bool:
        """True when a ``B`` template gives the (n_labels, n_labels) transition block."""
        return any(t.kind == "B" for t in self.templates)

    @property
    def transition_group(self) -> int | None:
        """Index of the ``B`` template (the transition block's group), or None."""
        return next((j for j, t in enumerate(self.templates) if t.kind == "B"), None)

    def dim(self, n_labels: int) -> int:
        """Length of ``w``: n_features * n_labels (+ n_labels ** 2 with transitions)."""
        return self.n_features_ * n_labels + (n_labels * n_labels if self.has_transitions else 0)

    def coordinate_groups(self, n_labels: int) -> np.ndarray:
        """Group (template index) of each coordinate of ``w``: int64 array of shape (dim,)."""
        groups = np.repeat(self.feature_groups_.astype(np.int64), n_labels)
        if self.has_transitions:
            groups = np.concatenate([groups, np.full(n_labels * n_labels, self.transition_group, np.int64)])
        return groups

    def feature_names(self) -> list[str]:
        """Feature strings ordered by id."""
        names = [""] * self.n_features_
        for s, k in self.vocabulary_.items():
            names[k] = s
        return names

    # -- fitting ---------------------------------------------------------------------------
    def _template_strings(self, sentences):
        """Column-major sentences, their lengths, and a generator over unigram templates of the
        corpus-long list of feature strings of that template (one string per token)."""
        sentences = list(sentences)
        cols = [_columns(sent, self._n_columns, i) for i, sent in enumerate(sentences)]
        lengths = [len(sent) for sent in sentences]

        def per_template():
            for j in self._unigram:
                tpl = self.templates[j]
                strs: list[str] = []
                for c, n in zip(cols, lengths):
                    strs.extend(tpl.features(c, n))
                yield j, strs

        return lengths, per_template()

    def fit(self, sentences) -> FeatureIndex:
        """Build the dictionary from ``sentences`` (each a sequence of token rows of str)."""
        self.fit_transform(sentences)
        return self

    def fit_transform(self, sentences) -> SequenceFeatures:
        """Build the dictionary and return the features of ``sentences`` (strings are built once).

        Ids are assigned template by template, in order of first appearance within a template.
        """
        lengths, strings = self._template_strings(sentences)
        n_tokens = int(sum(lengths))
        raw = np.full((n_tokens, len(self._unigram)), -1, dtype=np.int64)
        vocab: dict[str, int] = {}
        groups, counts = [], []
        sizes = np.zeros(len(self.templates), dtype=np.int64)
        n_kept = 0
        for pos, (j, strs) in enumerate(strings):
            cnt = Counter(strs)  # insertion-ordered: first appearance
            local = {}
            kept_counts = []
            for s, c in cnt.items():
                if c >= self.min_count:
                    local[s] = n_kept + len(kept_counts)
                    kept_counts.append(c)
                else:
                    local[s] = -1
            raw[:, pos] = np.fromiter(map(local.__getitem__, strs), dtype=np.int64, count=n_tokens)
            for s, k in local.items():
                if k >= 0:
                    vocab[s] = k
            groups.append(np.full(len(kept_counts), j, dtype=np.int32))
            counts.append(np.asarray(kept_counts, dtype=np.int64))
            sizes[j] = len(kept_counts)
            n_kept += len(kept_counts)
        self.vocabulary_ = vocab
        self.n_features_ = int(n_kept)
        self.feature_groups_ = np.concatenate(groups) if groups else np.zeros(0, np.int32)
        self.feature_counts_ = np.concatenate(counts) if counts else np.zeros(0, np.int64)
        # B and fully dropped templates get empty ranges
        self.group_offsets_ = np.concatenate([[0], np.cumsum(sizes)])
        return self._pack(raw, lengths)

    def transform(self, sentences) -> SequenceFeatures:
        """Feature ids of new ``sentences``; features not in the dictionary are ignored."""
        self._check_fitted()
        get = self.vocabulary_.get
        lengths, strings = self._template_strings(sentences)
        n_tokens = int(sum(lengths))
        raw = np.full((n_tokens, len(self._unigram)), -1, dtype=np.int64)
        for pos, (_, strs) in enumerate(strings):
            raw[:, pos] = np.fromiter(map(get, strs, repeat(-1)), dtype=np.int64, count=n_tokens)
        return self._pack(raw, lengths)

    def _pack(self, raw: np.ndarray, lengths) -> SequenceFeatures:
        mask = raw >= 0
        indices = raw[mask].astype(np.int32)
        indptr = np.zeros(raw.shape[0] + 1, dtype=np.int64)
        np.cumsum(mask.sum(axis=1), out=indptr[1:])
        sentence_ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(np.asarray(lengths, dtype=np.int64), out=sentence_ptr[1:])
        return SequenceFeatures(indptr, indices, sentence_ptr, self.n_features_)

    def _check_fitted(self):
        if not hasattr(self, "vocabulary_"):
            raise NotFittedError("this FeatureIndex is not fitted yet; call fit or fit_transform first")
