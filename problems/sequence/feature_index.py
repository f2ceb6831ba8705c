"""Apply CRF++ templates to a corpus: the feature dictionary, per-token feature ids, labels.

The joint feature map of a first-order chain is

    Phi(x, y) = sum_t psi(x, t) (x) e_{y_t}  +  sum_{t>=1} e_{y_{t-1}} (x) e_{y_t}

where ``psi(x, t)`` counts the unigram features firing at token ``t`` (0/1, unless two
templates of one bag-of-words group give the same string at a token: CRF++ counts it twice).
The weight vector is laid out as ``w = concat(W.ravel(), T.ravel())`` with ``W`` of shape
(n_features, n_labels) (row-major: coordinate ``f * n_labels + k``) and ``T`` of shape
(n_labels, n_labels), ``T[a, b]`` the score of label ``a`` followed by ``b`` (row = previous
label). The transition block exists only when the templates contain a ``B`` template.

Input-conditioned bigrams. When the ``B`` templates are anything but one bare ``B`` (a ``B``
template with macros such as ``B00:%x[0,0]``, or several ``B`` lines), every bigram feature
string ``g`` (from a ``B`` template applied at a token ``t >= 1``; a bare ``B`` gives the same
string at every such token) has its own (n_labels, n_labels) block, and the transition score
depends on the position:

    T_t[a, b] = sum_{g in beta(x, t)} W_B[g, a, b],
    Phi(x, y) = sum_t psi(x, t) (x) e_{y_t}  +  sum_{t>=1} beta(x, t) (x) e_{y_{t-1}} (x) e_{y_t}

with ``w = concat(W.ravel(), W_B.ravel())``, ``W_B`` of shape (n_bigram_features, n_labels,
n_labels); there is no separate ``T`` block (a bare ``B`` is one of the strings). The per-token
bigram ids are stored like the unigram ones (``bigram_indptr``, ``bigram_indices``, empty at
the first token of each sentence). :attr:`FeatureIndex.conditioned` tells the two layouts
apart; with one bare ``B`` (or none) nothing changes.

Groups. A template's group is its name (:mod:`problems.sequence.templates`); templates of one
name share a group and a dictionary. Features of group ``g`` get contiguous ids (unigram ids
and, separately, bigram ids), so group ``g`` (MTL's template group) is a contiguous block of
rows of ``W`` (and of ``W_B``); the bare ``B`` template's group is the transition block. A
feature string produced by templates of two groups (possible only with unnamed templates, e.g.
``U%x[0,0]`` on the token ``01:a`` and ``U01:%x[0,0]`` on ``a``) is one feature, as in CRF++,
of the group that produced it first. Per-token feature ids are stored CSR-like (``indptr``,
``indices``), never one-hot.

Predict-time policy (see :mod:`problems.validation`): a feature string not in the fitted
dictionary is ignored by :meth:`FeatureIndex.transform` (it has no weight), as CRF++ does; a
label never seen in training is an error when encoding training data
(:meth:`LabelAlphabet.encode`) and, in gold labels used for evaluation, is encoded as ``-1``
with one warning listing such labels (:meth:`LabelAlphabet.encode_unseen`), so it is scored as
wrong and never crashes.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count, repeat
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError
from problems.sequence.templates import Template, parse_templates, template_groups

__all__ = ["SequenceFeatures", "FeatureIndex", "LabelAlphabet"]


class SequenceFeatures(NamedTuple):
    """Per-token feature ids of a corpus of sentences, concatenated.

    Attributes
    ----------
    indptr : ndarray of shape (n_tokens + 1,), int64
        Token ``t``'s feature ids are ``indices[indptr[t]:indptr[t + 1]]``.
    indices : ndarray of shape (nnz,), int32
        Feature ids, non-decreasing within a token (an id repeats where two templates of one
        group give the same string at the token).
    sentence_ptr : ndarray of shape (n_sentences + 1,), int64
        Sentence ``i`` is tokens ``sentence_ptr[i]:sentence_ptr[i + 1]``.
    n_features : int
        Size of the feature dictionary.
    bigram_indptr, bigram_indices : ndarray or None
        The input-conditioned bigram feature ids of each token, laid out as ``indptr`` /
        ``indices`` (empty rows at the first token of each sentence); None unless the
        templates are conditioned (:attr:`FeatureIndex.conditioned`).
    n_bigram_features : int
        Size of the bigram dictionary (0 unless conditioned).
    values : ndarray of shape (nnz,), float64, or None
        The value of each feature occurrence (aligned with ``indices``): real-valued features
        (feature dicts' numbers, :mod:`problems.sequence.feature_dicts`). None: every
        occurrence counts 1 (templates, indicator features).
    """

    indptr: np.ndarray
    indices: np.ndarray
    sentence_ptr: np.ndarray
    n_features: int
    bigram_indptr: np.ndarray | None = None
    bigram_indices: np.ndarray | None = None
    n_bigram_features: int = 0
    values: np.ndarray | None = None

    @property
    def n_sentences(self) -> int:
        return len(self.sentence_ptr) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.indptr) - 1

    @property
    def bigram_features(self):
        """``(bigram_indptr, bigram_indices, n_bigram_features)`` for the oracle, or None."""
        if self.bigram_indptr is None:
            return None
        return self.bigram_indptr, self.bigram_indices, self.n_bigram_features

    def take(self, sentences) -> SequenceFeatures:
        """The features of the sentences ``sentences`` (indices into this corpus, in that order),
        as :meth:`FeatureIndex.transform` of those sentences gives them: the same ids, values
        and bigram ids, token for token (``values`` None when every value taken is 1, as the
        feature dicts' index gives it).

        Parameters
        ----------
        sentences : array-like of int of shape (n_taken,)
        """
        s = np.asarray(sentences, dtype=np.int64).ravel()
        if s.size and (s.min() < 0 or s.max() >= self.n_sentences):
            raise InputError(f"sentence indices must lie in [0, {self.n_sentences})", field="sentences")
        starts, lens = self.sentence_ptr[s], self.sentence_ptr[s + 1] - self.sentence_ptr[s]
        sentence_ptr = np.zeros(s.size + 1, dtype=np.int64)
        np.cumsum(lens, out=sentence_ptr[1:])
        tokens = np.repeat(starts - sentence_ptr[:-1], lens) + np.arange(int(sentence_ptr[-1]), dtype=np.int64)
        indptr, at = _take_rows(self.indptr, tokens)
        values = None if self.values is None else self.values[at]
        if values is not None and bool(np.all(values == 1.0)):
            values = None  # indicators only: the integer kernels (as DictFeatureIndex decides)
        if self.bigram_indptr is None:
            return SequenceFeatures(indptr, self.indices[at], sentence_ptr, self.n_features, values=values)
        assert self.bigram_indices is not None  # set together with bigram_indptr
        bptr, bat = _take_rows(self.bigram_indptr, tokens)
        return SequenceFeatures(
            indptr,
            self.indices[at],
            sentence_ptr,
            self.n_features,
            bptr,
            self.bigram_indices[bat],
            self.n_bigram_features,
            values,
        )

    def to_csr(self):
        """The (n_tokens, n_features) scipy CSR matrix of unigram feature counts, or sums of the
        values with real-valued features (for inspection and tests)."""
        import scipy.sparse as sp

        data = np.ones(len(self.indices), dtype=np.float64) if self.values is None else self.values.copy()
        # copies: sum_duplicates works in place and would rewrite this object's arrays
        m = sp.csr_matrix((data, self.indices.copy(), self.indptr.copy()), shape=(self.n_tokens, self.n_features))
        m.sum_duplicates()
        return m


def _take_rows(indptr, rows):
    """The row pointer of the CSR rows ``rows`` of ``indptr`` and the positions of their entries."""
    lens = indptr[rows + 1] - indptr[rows]
    ptr = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    at = np.repeat(indptr[rows] - ptr[:-1], lens) + np.arange(int(ptr[-1]), dtype=np.int64)
    return ptr, at


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


def _columns(sentence, templates, n_needed: int, i: int):
    """Column-major view of one sentence (list of token rows), checking the column count; a
    token with too few columns names the first template that reads a missing column."""
    cols = list(zip(*sentence))
    if sentence and len(cols) < n_needed:
        short = min(len(row) for row in sentence)
        tpl = next(t for t in templates if t.max_column >= short)
        raise InputError(
            f"sentence {i}: a token has {short} input column(s), but {tpl.where()} reads column {tpl.max_column}; "
            f"expected at least {n_needed} input columns",
            field="columns",
        )
    return cols


class _Dictionary:
    """Feature strings of one kind (unigram or bigram) -> ids, built group by group (fitting)."""

    def __init__(self):
        self.ids: dict[str, int] = {}
        self.counts: list[int] = []
        self.groups: list[int] = []

    def add(self, strings: list, group: int) -> np.ndarray:
        """Provisional ids of ``strings`` (new strings get the next ids, in order of first appearance).

        One pass of dictionary lookups in C (``map(dict.setdefault, strings, count())`` keeps
        each string's first position), the rest in numpy, and a Python loop over the distinct
        strings only.
        """
        n = len(strings)
        local: dict[str, int] = {}
        first = np.fromiter(map(local.setdefault, strings, count()), dtype=np.int64, count=n)
        firsts = np.fromiter(local.values(), dtype=np.int64, count=len(local))  # first appearance order
        lut = np.empty(n, dtype=np.int64)
        lut[firsts] = np.arange(len(local))
        inverse = lut[first]
        ids, counts = self.ids, self.counts
        global_ids = []
        for s, c in zip(local, np.bincount(inverse, minlength=len(local)).tolist()):
            k = ids.get(s)
            if k is None:
                k = ids[s] = len(counts)
                counts.append(c)
                self.groups.append(group)
            else:
                counts[k] += c
            global_ids.append(k)
        return np.asarray(global_ids, dtype=np.int64)[inverse]

    def keep(self, min_count: int):
        """``(vocabulary, remap, groups, counts)`` of the strings seen ``min_count`` times or more:
        ``remap[provisional id]`` is the final id or -1 (order kept, so groups stay contiguous)."""
        counts = np.asarray(self.counts, dtype=np.int64)
        kept = counts >= min_count
        remap = np.where(kept, np.cumsum(kept) - 1, -1).astype(np.int64)
        final = remap.tolist()
        vocab = {s: final[k] for s, k in self.ids.items() if final[k] >= 0}
        return vocab, remap, np.asarray(self.groups, dtype=np.int32)[kept], counts[kept]


class FeatureIndex:
    """The feature dictionary of a set of templates, fitted on a corpus.

    Parameters
    ----------
    templates : str or list of Template
        Template text (CRF++ syntax) or parsed templates.
    min_count : int, default=1
        Features seen fewer than ``min_count`` times in the fitting corpus are dropped
        (CRF++'s ``-f``; bigram features count their tokens ``t >= 1``).

    Notes
    -----
    :meth:`transform` ignores feature strings absent from the dictionary (unseen in training
    or dropped by ``min_count``): a token whose features are all unseen gets no unigram
    feature and is labelled by the transitions alone.

    Attributes
    ----------
    templates : list of Template
    vocabulary_ : dict of str to int
        Unigram feature string -> feature id. After fitting, the strings are kept joined in
        one string, far smaller than the dictionary of as many strings, and the dictionary is
        made again at its first use (:meth:`transform`, a model file): a tagger's training,
        which needs only the ids, does not hold it.
    feature_groups_ : ndarray of shape (n_features,), int32
        Group (index into :attr:`template_names`) of each unigram feature.
    group_offsets_ : ndarray of shape (n_groups + 1,), int64
        Unigram features of group ``g`` are ids ``group_offsets_[g]:group_offsets_[g + 1]``
        (empty for the groups of ``B`` templates).
    feature_counts_ : ndarray of shape (n_features,), int64
        Occurrences of each kept feature in the fitting corpus.
    n_features_ : int
    bigram_vocabulary_ : dict of str to int
        Bigram feature string -> bigram id (empty unless :attr:`conditioned`).
    bigram_feature_groups_, bigram_feature_counts_ : ndarray of shape (n_bigram_features,)
    n_bigram_features_ : int
    """

    def __init__(self, templates, *, min_count: int = 1):
        self.templates = parse_templates(templates) if isinstance(templates, str) else list(templates)
        if not all(isinstance(t, Template) for t in self.templates):
            raise InputError("templates must be template text or a list of Template", field="templates")
        from problems.validation import check_int

        self.min_count = check_int(min_count, "min_count")
        self._names = template_groups(self.templates)
        group = {name: g for g, name in enumerate(self._names)}
        self._group_of = [group[t.name] for t in self.templates]
        # templates of each kind, group by group (so ids come out contiguous per group)
        by_group = sorted(range(len(self.templates)), key=lambda j: (self._group_of[j], j))
        self._unigram = [j for j in by_group if self.templates[j].kind == "U"]
        self._bigram = [j for j in by_group if self.templates[j].kind == "B"]
        self._n_columns = 1 + max((t.max_column for t in self.templates), default=-1)
        # a row's ids are in increasing order without sorting when every template has its own
        # name, written 'NAME:' (its strings cannot meet another group's)
        named = all(t.text == t.name or t.text.startswith(t.name + ":") for t in self.templates)
        self._sort_rows = not named or len(self._names) < len(self.templates)

    # -- properties ------------------------------------------------------------------------
    @property
    def template_names(self) -> list[str]:
        """The group names (distinct template names, in order of first appearance): group ``g`` is
        ``template_names[g]``."""
        return list(self._names)

    @property
    def conditioned(self) -> bool:
        """True when the ``B`` templates are more than one bare ``B``: input-conditioned bigram
        features (:attr:`bigram_vocabulary_`) replace the single transition block."""
        return len(self._bigram) > 1 or any(self.templates[j].macros for j in self._bigram)

    @property
    def has_transitions(self) -> bool:
        """True when one bare ``B`` template gives the (n_labels, n_labels) transition block (the
        plain layout; False when there is no ``B`` template or the bigrams are :attr:`conditioned`)."""
        return bool(self._bigram) and not self.conditioned

    @property
    def transition_group(self) -> int | None:
        """Group of the bare ``B`` template (the transition block's group), or None."""
        return self._group_of[self._bigram[0]] if self.has_transitions else None

    @property
    def n_bigram_features_(self) -> int:
        return len(getattr(self, "bigram_vocabulary_", {}))

    def dim(self, n_labels: int) -> int:
        """Length of ``w``: n_features * n_labels (+ n_labels ** 2 with transitions, + n_bigram_features *
        n_labels ** 2 with conditioned bigrams)."""
        K2 = n_labels * n_labels
        return self.n_features_ * n_labels + (K2 if self.has_transitions else 0) + self.n_bigram_features_ * K2

    def coordinate_groups(self, n_labels: int) -> np.ndarray:
        """Group (index into :attr:`template_names`) of each coordinate of ``w``: int64 array of shape (dim,)."""
        K2 = n_labels * n_labels
        parts = [np.repeat(self.feature_groups_.astype(np.int64), n_labels)]
        if self.has_transitions:
            parts.append(np.full(K2, self.transition_group, np.int64))
        if self.conditioned:
            parts.append(np.repeat(self.bigram_feature_groups_.astype(np.int64), K2))
        return np.concatenate(parts)

    @property
    def vocabulary_(self) -> dict:
        vocab = self.__dict__.get("_vocabulary", self.__dict__.get("vocabulary_"))
        if vocab is None:
            names = self.__dict__.get("_vocabulary_names")
            if names is None:
                raise AttributeError("vocabulary_")
            vocab = dict(zip(_split_names(names, self.n_features_), range(self.n_features_)))
            self.__dict__.update(_vocabulary=vocab, _vocabulary_names=None)
        return vocab

    @vocabulary_.setter
    def vocabulary_(self, value: dict) -> None:
        self.__dict__.pop("vocabulary_", None)
        self.__dict__.update(_vocabulary=value, _vocabulary_names=None)

    def _keep_names_only(self) -> None:
        """Keep the fitted strings in one string, in id order, in place of the dictionary (made
        again at the first use of :attr:`vocabulary_`); unless a string holds the separator."""
        names = "\0".join(_names_by_id(self.vocabulary_, self.n_features_))
        if names.count("\0") == max(self.n_features_ - 1, 0):
            self.__dict__.update(_vocabulary=None, _vocabulary_names=names)

    def feature_names(self) -> list[str]:
        """Unigram feature strings ordered by id."""
        names = self.__dict__.get("_vocabulary_names")
        if names is not None:
            return _split_names(names, self.n_features_)
        return _names_by_id(self.vocabulary_, self.n_features_)

    def bigram_feature_names(self) -> list[str]:
        """Bigram feature strings ordered by bigram id (empty unless :attr:`conditioned`)."""
        return _names_by_id(getattr(self, "bigram_vocabulary_", {}), self.n_bigram_features_)

    # -- fitting ---------------------------------------------------------------------------
    def _template_strings(self, sentences):
        """Token counts and a generator over ``(kind position, template index, strings, rows)``:
        per template (unigram ones, then bigram ones, each group by group) the corpus-long list
        of its feature strings and the token rows they belong to (None: every token; bigram
        templates skip the first token of each sentence)."""
        sentences = list(sentences)
        cols = [_columns(sent, self.templates, self._n_columns, i) for i, sent in enumerate(sentences)]
        lengths = [len(sent) for sent in sentences]
        n_tokens = int(sum(lengths))
        rows = None
        if self._bigram:
            lens = np.asarray(lengths, dtype=np.int64)
            starts = np.zeros(n_tokens, dtype=bool)
            starts[(np.cumsum(lens) - lens)[lens > 0]] = True
            rows = np.flatnonzero(~starts)

        def per_template():
            for pos, j in enumerate(self._unigram):
                tpl = self.templates[j]
                strs: list[str] = []
                for c, n in zip(cols, lengths):
                    strs.extend(tpl.features(c, n))
                yield "U", pos, j, strs
            for pos, j in enumerate(self._bigram):
                tpl = self.templates[j]
                strs = []
                for c, n in zip(cols, lengths):
                    strs.extend(tpl.features(c, n)[1:])
                yield "B", pos, j, strs

        return lengths, rows, per_template()

    def fit(self, sentences) -> FeatureIndex:
        """Build the dictionary from ``sentences`` (each a sequence of token rows of str)."""
        self.fit_transform(sentences)
        return self

    def fit_transform(self, sentences) -> SequenceFeatures:
        """Build the dictionary and return the features of ``sentences`` (strings are built once).

        Ids are assigned group by group, in order of first appearance within a group.
        """
        lengths, rows, strings = self._template_strings(sentences)
        n_tokens = int(sum(lengths))
        conditioned = self.conditioned
        raw = np.full((n_tokens, len(self._unigram)), -1, dtype=np.int64)
        braw = np.full((n_tokens, len(self._bigram) if conditioned else 0), -1, dtype=np.int64)
        uni, bi = _Dictionary(), _Dictionary()
        for kind, pos, j, strs in strings:
            if kind == "U":
                raw[:, pos] = uni.add(strs, self._group_of[j])
            elif conditioned:
                braw[rows, pos] = bi.add(strs, self._group_of[j])
        n_groups = len(self._names)
        self.vocabulary_, remap, self.feature_groups_, self.feature_counts_ = uni.keep(self.min_count)
        raw = np.append(remap, -1)[raw]  # -1 (no feature) stays -1
        self.n_features_ = len(self.vocabulary_)
        del uni
        self._keep_names_only()
        # B and fully dropped templates get empty ranges
        self.group_offsets_ = _offsets(self.feature_groups_, n_groups)
        self.bigram_vocabulary_, bremap, self.bigram_feature_groups_, self.bigram_feature_counts_ = bi.keep(
            self.min_count
        )
        if conditioned:
            braw = np.append(bremap, -1)[braw]
        return self._pack(raw, braw, lengths)

    def transform(self, sentences) -> SequenceFeatures:
        """Feature ids of new ``sentences``; features not in the dictionary are ignored."""
        self._check_fitted()
        get = self.vocabulary_.get
        bget = self.bigram_vocabulary_.get
        lengths, rows, strings = self._template_strings(sentences)
        n_tokens = int(sum(lengths))
        conditioned = self.conditioned
        raw = np.full((n_tokens, len(self._unigram)), -1, dtype=np.int64)
        braw = np.full((n_tokens, len(self._bigram) if conditioned else 0), -1, dtype=np.int64)
        for kind, pos, _, strs in strings:
            if kind == "U":
                raw[:, pos] = np.fromiter(map(get, strs, repeat(-1)), dtype=np.int64, count=n_tokens)
            elif conditioned:
                braw[rows, pos] = np.fromiter(map(bget, strs, repeat(-1)), dtype=np.int64, count=len(strs))
        return self._pack(raw, braw, lengths)

    def _pack(self, raw: np.ndarray, braw: np.ndarray, lengths) -> SequenceFeatures:
        indptr, indices = self._csr(raw)
        sentence_ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(np.asarray(lengths, dtype=np.int64), out=sentence_ptr[1:])
        if not self.conditioned:
            return SequenceFeatures(indptr, indices, sentence_ptr, self.n_features_)
        bindptr, bindices = self._csr(braw)
        return SequenceFeatures(
            indptr, indices, sentence_ptr, self.n_features_, bindptr, bindices, self.n_bigram_features_
        )

    def _csr(self, raw: np.ndarray):
        if self._sort_rows:
            raw.sort(axis=1)  # -1 (no feature) first, then the ids in increasing order
        mask = raw >= 0
        indices = raw[mask].astype(np.int32)
        indptr = np.zeros(raw.shape[0] + 1, dtype=np.int64)
        np.cumsum(mask.sum(axis=1), out=indptr[1:])
        return indptr, indices

    def _check_fitted(self):
        if not hasattr(self, "vocabulary_"):
            from sklearn.exceptions import NotFittedError  # only when raised: applying a model needs no sklearn

            raise NotFittedError("this FeatureIndex is not fitted yet; call fit or fit_transform first")


def _split_names(names: str, n: int) -> list[str]:
    """The ``n`` strings joined by ``"\\0"`` in ``names`` (none when ``n`` is 0)."""
    return names.split("\0") if n else []


def _names_by_id(vocabulary: dict, n: int) -> list[str]:
    names = [""] * n
    for s, k in vocabulary.items():
        names[k] = s
    return names


def _offsets(groups: np.ndarray, n_groups: int) -> np.ndarray:
    """``offsets[g]:offsets[g + 1]`` are the ids of group ``g`` (ids contiguous per group)."""
    return np.concatenate([[0], np.cumsum(np.bincount(groups, minlength=n_groups))]).astype(np.int64)
