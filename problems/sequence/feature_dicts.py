"""sklearn-crfsuite's input: per-token feature dicts, one dict key per feature group.

A corpus is a list of sentences, each a list of tokens, each token a dict from feature names
(str) to values, as sklearn-crfsuite's tutorial builds them::

    {"bias": 1.0, "word.lower()": "the", "word.istitle()": False, "postag": "DT", "BOS": True}

:class:`DictFeatureIndex` turns them into the per-token feature ids of
:class:`~problems.sequence.feature_index.SequenceFeatures`, the same input the chain oracle
takes from CRF++ templates; every dict key is one feature group (MTL^struct's template), so
``template_weights_`` of a :class:`~problems.sequence.tagger.SequenceTagger` name the keys. The
transitions are one more group, named ``"B"`` as CRF++'s bigram template (a dict key ``"B"`` is
refused). A value gives, for its key ``k``:

- ``str`` ``v``: the indicator feature ``k=v`` (CRFsuite's attribute ``k:v``, value 1);
- ``True``: the indicator ``k``; ``False``: nothing (CRFsuite's value 0 adds nothing);
- a list or tuple of str: one indicator ``k=v`` per item (a repeated item counts twice);
- a number ``x`` (``int``, ``float``, numpy's, not bool): the **real-valued** feature ``k`` with
  value ``x``, as CRFsuite's attribute ``k`` with value ``x``: the value multiplies the
  feature's weights, so the score of label ``y`` at the token gains ``x * w[k, y]`` and the
  joint feature ``Phi`` adds ``x`` where an indicator adds 1; 0 gives nothing. ``True`` and the
  number 1 are the same feature ``k`` (``"bias": 1.0`` is CRFsuite's bias).

The values travel with the feature ids (:attr:`SequenceFeatures.values
<problems.sequence.feature_index.SequenceFeatures>`) into the chain oracle's valued kernels
(:mod:`oracles.sequence_values`); a corpus whose values are all 1 (strings, booleans, a
``"bias": 1.0``) has ``values`` None and runs the integer kernels, bit for bit as before.

Binning, the earlier reading of numbers, stays as an option of the index
(``DictFeatureIndex(numbers="bins")``; models saved before real values read back with it): a
key whose nonzero training values are all equal gives the indicator ``k``; otherwise the
value's **bin** among at most :data:`N_NUMERIC_BINS` quantile bins of the key's nonzero
training values, an indicator named by its interval (``k<0.5``, ``0.5<=k<2``, ``k>=2``): a
piecewise-constant function of the value instead of a linear one.

Other values (None, dicts, NaN or infinite numbers, lists of non-strings) are refused with an
:class:`~cutplane.exceptions.InputError` naming sentence, token and key. At prediction, a
feature string not seen in training is ignored, as for templates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real

import numpy as np

from cutplane.exceptions import InputError
from problems.sequence.feature_index import SequenceFeatures

__all__ = [
    "DictFeatureIndex",
    "N_NUMERIC_BINS",
    "NUMBER_MODES",
    "TRANSITION_GROUP",
    "is_feature_dict_corpus",
    "check_feature_dicts",
]

#: At most this many quantile bins per numeric key (fewer when its values have fewer distinct quantiles).
N_NUMERIC_BINS = 10
#: The name of the transition group (CRF++'s bare ``B`` template).
TRANSITION_GROUP = "B"
#: How numbers are read: real-valued features (the default) or quantile-bin indicators.
NUMBER_MODES = ("real", "bins")


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def is_feature_dict_corpus(X) -> bool:
    """True when the first token of the first non-empty sentence of ``X`` is a mapping (a feature
    dict); False for token rows and for anything that is not a list of sentences (the row check
    then names the problem)."""
    if isinstance(X, (str, bytes, Mapping)) or not hasattr(X, "__iter__"):
        return False
    for sent in X:
        if isinstance(sent, (str, bytes, Mapping)) or not hasattr(sent, "__len__"):
            return False
        if len(sent):
            return isinstance(next(iter(sent)), Mapping)
    return False


def _check_value(value, where):
    if isinstance(value, (bool, np.bool_, str)):
        return
    if isinstance(value, Real):
        if not math.isfinite(float(value)):
            raise InputError(f"{where}: a number must be finite, got {value!r}", field="X")
        return
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return
    raise InputError(
        f"{where}: a feature value must be str, bool, a finite number or a list of str, got "
        f"{type(value).__name__} {_short(value)}",
        field="X",
    )


def check_feature_dicts(X, y=None, *, name="X", min_sequences=1):
    """Sentences of feature dicts and, when given, matching label lists.

    Parameters
    ----------
    X : list of list of dict
        Per sentence, per token, a dict of str keys to str, bool, finite numbers or lists of str.
    y : list of list of str, optional
        One label per token.
    name : str
        The argument's name in error messages.

    Returns
    -------
    X : list of list of dict
    y : list of list of str or None

    Raises
    ------
    InputError
        Not a list of sentences, an empty sentence, a token that is not a dict (a mix of feature
        dicts and token rows), a key that is not a non-empty str or is ``"B"``, a value of
        another type, labels that are not str or do not match the tokens one for one.
    """
    if isinstance(X, (str, bytes, Mapping)) or not hasattr(X, "__len__"):
        raise InputError("expected a list of sentences (lists of feature dicts)", field=name)
    if len(X) < min_sequences:
        raise InputError(f"need at least {min_sequences} sentence(s), got {len(X)}", field=name)
    out = []
    for i, sent in enumerate(X):
        if isinstance(sent, (str, bytes, Mapping)) or not hasattr(sent, "__len__"):
            raise InputError(f"sentence {i} is {type(sent).__name__}, expected a list of feature dicts", field=name)
        if len(sent) == 0:
            raise InputError(f"sentence {i} has no tokens (sequences of length 0 are not allowed)", field=name)
        for t, tok in enumerate(sent):
            if not isinstance(tok, Mapping):
                raise InputError(
                    f"sentence {i}, token {t}: expected a feature dict (the corpus starts with feature dicts; "
                    f"feature dicts and token rows cannot be mixed), got {_short(tok)}",
                    field=name,
                )
            for key, value in tok.items():
                where = f"sentence {i}, token {t}, key {_short(key)}"
                if not isinstance(key, str) or not key:
                    raise InputError(f"{where}: feature names must be non-empty str", field=name)
                if key == TRANSITION_GROUP:
                    raise InputError(
                        f"{where}: the feature name {TRANSITION_GROUP!r} is the transitions' group; rename the key",
                        field=name,
                    )
                _check_value(value, where)
        out.append(list(sent))
    if y is None:
        return out, None
    if isinstance(y, (str, bytes)) or not hasattr(y, "__len__") or len(y) != len(out):
        n = len(y) if hasattr(y, "__len__") and not isinstance(y, (str, bytes)) else type(y).__name__
        raise InputError(f"y must hold one label sequence per sentence: {len(out)} sentences, got {n}", field="y")
    labels = []
    for i, (sent, lab) in enumerate(zip(out, y)):
        if isinstance(lab, (str, bytes)) or not hasattr(lab, "__len__"):
            raise InputError(f"labels of sentence {i} must be a sequence of str, got {_short(lab)}", field="y")
        lab = list(lab)
        if len(lab) != len(sent):
            raise InputError(f"sentence {i} has {len(sent)} tokens but {len(lab)} labels", field="y")
        if not all(isinstance(v, str) and v for v in lab):
            raise InputError(f"labels of sentence {i} must be non-empty str, got {_short(lab)}", field="y")
        labels.append(lab)
    return out, labels


def _bin_names(key: str, edges: np.ndarray) -> list[str]:
    """The names of the bins ``(-inf, e0), [e0, e1), ..., [e_last, inf)`` of ``key``."""
    if len(edges) == 0:
        return [key]
    names = [f"{key}<{edges[0]:.6g}"]
    names += [f"{a:.6g}<={key}<{b:.6g}" for a, b in zip(edges[:-1], edges[1:])]
    return names + [f"{key}>={edges[-1]:.6g}"]


def _quantile_edges(values: list) -> np.ndarray:
    """Interior bin edges: the distinct quantiles ``k / N_NUMERIC_BINS`` (k = 1..N-1) of ``values``
    above their minimum, each a training value (``inverted_cdf``), so no bin is empty on the
    training values; none when all are equal."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0 or v.min() == v.max():
        return np.zeros(0)
    q = np.quantile(v, np.arange(1, N_NUMERIC_BINS) / N_NUMERIC_BINS, method="inverted_cdf")
    return np.unique(q[q > v.min()])


class DictFeatureIndex:
    """The feature dictionary of a corpus of feature dicts, with the interface of
    :class:`~problems.sequence.feature_index.FeatureIndex` that the tagger uses.

    Parameters
    ----------
    min_count : int, default=1
        Features seen fewer than ``min_count`` times in the fitting corpus are dropped (CRF++'s
        ``-f``).
    numbers : {"real", "bins"}, default="real"
        How a number is read: ``"real"``, the feature of its key with the number as its value
        (CRFsuite's reading); ``"bins"``, an indicator of its quantile bin (see the module
        docstring).

    Attributes
    ----------
    template_names : list of str
        The groups: the dict keys in order of first appearance, then ``"B"`` (the transitions).
    vocabulary_ : dict of str to int
        Feature string -> feature id; the ids of one key are contiguous.
    feature_groups_ : ndarray of shape (n_features,), int32
    group_offsets_ : ndarray of shape (n_groups + 1,), int64
    feature_counts_ : ndarray of shape (n_features,), int64
    numeric_edges_ : dict of str to ndarray
        With ``numbers="bins"``, the interior bin edges of each numeric key (empty: one bin, the
        indicator ``key``); empty with ``numbers="real"``.
    n_features_ : int
    """

    has_transitions = True
    conditioned = False
    n_bigram_features_ = 0
    bigram_vocabulary_: dict = {}
    bigram_feature_groups_ = np.zeros(0, dtype=np.int32)

    def __init__(self, *, min_count: int = 1, numbers: str = "real"):
        from problems.validation import check_int

        self.min_count = check_int(min_count, "min_count")
        if numbers not in NUMBER_MODES:
            raise InputError(f"numbers must be one of {list(NUMBER_MODES)}, got {numbers!r}", field="numbers")
        self.numbers = numbers

    # -- the FeatureIndex interface ----------------------------------------------------------
    @property
    def template_names(self) -> list[str]:
        self._check_fitted()
        return [*self.keys_, TRANSITION_GROUP]

    @property
    def transition_group(self) -> int:
        return len(self.template_names) - 1

    def dim(self, n_labels: int) -> int:
        """Length of ``w``: n_features * n_labels + n_labels ** 2 (the transitions)."""
        return self.n_features_ * n_labels + n_labels * n_labels

    def coordinate_groups(self, n_labels: int) -> np.ndarray:
        """Group (index into :attr:`template_names`) of each coordinate of ``w``: int64 of shape (dim,)."""
        return np.concatenate(
            [
                np.repeat(self.feature_groups_.astype(np.int64), n_labels),
                np.full(n_labels * n_labels, self.transition_group, np.int64),
            ]
        )

    def feature_names(self) -> list[str]:
        """Feature strings ordered by id."""
        names = [""] * self.n_features_
        for s, k in self.vocabulary_.items():
            names[k] = s
        return names

    def bigram_feature_names(self) -> list[str]:
        return []

    # -- feature strings ---------------------------------------------------------------------
    def _strings(self, X, keep=None):
        """Per token, its ``(key, feature string, value)`` triples, flattened: the strings, their
        keys, their values (float64) and the number of triples of each token (only the keys in
        ``keep`` when given). With ``numbers="real"`` a number is the string ``key`` with the
        number as its value; with ``"bins"`` it is binned by :attr:`numeric_edges_` (fitted here
        on the values of ``X`` when absent), value 1."""
        real = self.numbers == "real"
        edges = getattr(self, "numeric_edges_", None)
        strings: list = []
        keys: list = []
        real_at: list = []  # (position in strings, value) of the real-valued numbers
        per_token: list = []
        numeric: list = []  # (position in strings, key, value): binned once the edges are known
        for sent in X:
            for tok in sent:
                n0 = len(strings)
                for key, value in tok.items():
                    if keep is not None and key not in keep:
                        continue
                    if isinstance(value, (bool, np.bool_)):
                        if value:
                            strings.append(key)
                            keys.append(key)
                    elif isinstance(value, str):
                        strings.append(f"{key}={value}")
                        keys.append(key)
                    elif isinstance(value, (list, tuple)):
                        strings.extend(f"{key}={v}" for v in value)
                        keys.extend([key] * len(value))
                    elif value != 0:
                        if real:
                            real_at.append((len(strings), float(value)))
                            strings.append(key)
                        else:
                            numeric.append((len(strings), key, float(value)))
                            strings.append(None)
                        keys.append(key)
                per_token.append(len(strings) - n0)
        values = np.ones(len(strings))
        for pos, v in real_at:
            values[pos] = v
        if numeric and edges is None:  # fitting: the bins of each numeric key from its values
            by_key: dict[str, list] = {}
            for _, key, v in numeric:
                by_key.setdefault(key, []).append(v)
            edges = self.numeric_edges_ = {key: _quantile_edges(vs) for key, vs in by_key.items()}
        elif edges is None:
            edges = self.numeric_edges_ = {}
        for pos, key, v in numeric:
            e = edges.get(key)
            if e is None:  # a key never numeric in training: the value has no feature (ignored)
                strings[pos] = None
            else:
                strings[pos] = _bin_names(key, e)[int(np.searchsorted(e, v, side="right"))]
        return strings, keys, values, np.asarray(per_token, dtype=np.int64)

    # -- fitting -------------------------------------------------------------------------------
    def fit(self, X) -> DictFeatureIndex:
        """Build the dictionary from ``X`` (sentences of feature dicts)."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X) -> SequenceFeatures:
        """Build the dictionary and return the features of ``X``: ids contiguous per key, keys in
        order of first appearance, features of a key in order of first appearance."""
        for attr in ("numeric_edges_", "vocabulary_"):
            self.__dict__.pop(attr, None)
        strings, keys, values, per_token = self._strings(X)
        group_of: dict[str, int] = {}
        first: dict[str, int] = {}  # feature string -> provisional id (first appearance)
        feat_group: list[int] = []
        for s, k in zip(strings, keys):
            if s not in first:
                first[s] = len(feat_group)
                feat_group.append(group_of.setdefault(k, len(group_of)))
        prov = np.fromiter((first[s] for s in strings), dtype=np.int64, count=len(strings))
        counts = np.bincount(prov, minlength=len(feat_group))
        groups = np.asarray(feat_group, dtype=np.int64)
        order = np.argsort(groups, kind="stable")  # by group, first appearance within a group
        kept = counts[order] >= self.min_count
        order = order[kept]
        remap = np.full(len(feat_group), -1, dtype=np.int64)
        remap[order] = np.arange(len(order))
        self.keys_ = list(group_of)
        names = list(first)
        self.vocabulary_ = {names[p]: int(remap[p]) for p in order.tolist()}
        self.n_features_ = len(order)
        self.feature_groups_ = groups[order].astype(np.int32)
        self.feature_counts_ = counts[order].astype(np.int64)
        n_groups = len(self.keys_) + 1
        self.group_offsets_ = np.concatenate([[0], np.cumsum(np.bincount(self.feature_groups_, minlength=n_groups))])
        return self._pack(remap[prov], values, per_token, X)

    def transform(self, X, *, keys=None) -> SequenceFeatures:
        """Feature ids of new sentences; features not in the dictionary are ignored. ``keys``: only
        the features of these dict keys are extracted (the others have no weight in the model)."""
        self._check_fitted()
        strings, _, values, per_token = self._strings(X, keep=None if keys is None else set(keys))
        get = self.vocabulary_.get
        ids = np.fromiter((get(s, -1) for s in strings), dtype=np.int64, count=len(strings))
        return self._pack(ids, values, per_token, X)

    def _pack(self, ids: np.ndarray, values: np.ndarray, per_token: np.ndarray, X) -> SequenceFeatures:
        """CSR per token (ids sorted within a token, the unknown ones dropped), with the values
        (None when every kept value is 1: indicator features)."""
        token = np.repeat(np.arange(len(per_token)), per_token)
        keep = ids >= 0
        ids, token, values = ids[keep], token[keep], values[keep]
        order = np.lexsort((values, ids, token))  # the values too: a deterministic order within a token
        indices = ids[order].astype(np.int32)
        vals = values[order] if np.any(values != 1.0) else None
        indptr = np.zeros(len(per_token) + 1, dtype=np.int64)
        np.cumsum(np.bincount(token, minlength=len(per_token)), out=indptr[1:])
        lengths = np.fromiter((len(s) for s in X), dtype=np.int64, count=len(X))
        sentence_ptr = np.zeros(len(X) + 1, dtype=np.int64)
        np.cumsum(lengths, out=sentence_ptr[1:])
        return SequenceFeatures(indptr, indices, sentence_ptr, self.n_features_, values=vals)

    def _check_fitted(self):
        if not hasattr(self, "vocabulary_"):
            from sklearn.exceptions import NotFittedError  # only when raised: applying a model needs no sklearn

            raise NotFittedError("this DictFeatureIndex is not fitted yet; call fit or fit_transform first")
