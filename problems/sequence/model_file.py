"""A SequenceTagger's model file read without scikit-learn: what ``cutplane evaluate`` /
``predict`` / ``dump`` need to label sentences.

:class:`~problems.sequence.tagger.SequenceTagger` derives from scikit-learn's ``BaseEstimator``,
whose import alone (``sklearn.utils.validation``, ``scipy.stats``, pandas) costs about a second;
a command that only applies a saved model does not need it. This module holds the file's
schema and checks (:data:`MODEL_SCHEMA`, used by ``SequenceTagger.load`` too), the rebuilding
of the feature index, labels and weights from a file (:func:`read_model_parts`), the Viterbi
labelling shared with ``SequenceTagger.predict`` (:func:`decode`) and :class:`TaggerModel`, a
saved model that predicts (no ``fit``, no hyper-parameters). Nothing here imports
scikit-learn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cutplane.exceptions import InputError, ModelFormatError
from problems.model_schemas import LEGACY_SOLVER_KEYS, ModelSchema, check_schema, json_type_ok
from problems.model_selection import SELECTION_META
from problems.sequence.feature_index import FeatureIndex, LabelAlphabet

__all__ = ["MODEL_SCHEMA", "PARAM_NAMES", "TaggerModel", "read_model_parts", "decode"]

#: The constructor parameters of SequenceTagger and SequenceTaggerCV (what a file's ``params``
#: may hold besides the format-version-1 solver keys); a test checks them against the classes.
PARAM_NAMES = frozenset(
    {
        "templates",
        "C",
        "Cs",
        "regularizer",
        "p",
        "min_count",
        "active_rtol",
        "solver",
        "validation_fraction",
        "validation_seed",
        "refit",
        "extend",
    }
)
_MODEL_NAMES = ("SequenceTagger", "SequenceTaggerCV")


def _feature_dict_groups(meta, path) -> list:
    """The group names of a model fitted on feature dicts (its dict keys, then ``"B"``), its
    ``feature_dicts`` entry checked: distinct non-empty keys other than ``"B"``, how numbers are
    read (``"real"`` or ``"bins"``; absent in files written before real values: bins), the
    numeric keys' bin edges finite and increasing, empty ``templates``."""
    from problems.sequence.feature_dicts import NUMBER_MODES, TRANSITION_GROUP

    fd = meta["feature_dicts"]
    keys = fd.get("keys")
    edges = fd.get("numeric_edges")
    if (
        set(fd) - {"numbers"} != {"keys", "numeric_edges"}
        or fd.get("numbers", "bins") not in NUMBER_MODES
        or not isinstance(keys, list)
        or not all(isinstance(k, str) and k and k != TRANSITION_GROUP for k in keys)
        or len(set(keys)) != len(keys)
    ):
        raise ModelFormatError(
            "feature_dicts must hold 'keys' (distinct non-empty str other than 'B'), 'numeric_edges' and "
            f"optionally 'numbers' (one of {list(NUMBER_MODES)})",
            path=path,
            field="feature_dicts",
        )
    if not isinstance(edges, dict) or not set(edges) <= set(keys):
        raise ModelFormatError(
            "feature_dicts.numeric_edges must map some of the keys to bin edges", path=path, field="feature_dicts"
        )
    for key, e in edges.items():
        if (
            not isinstance(e, list)
            or not all(json_type_ok(v, (float,)) for v in e)
            or np.any(np.diff(np.asarray(e, dtype=np.float64)) <= 0)
        ):
            raise ModelFormatError(
                f"feature_dicts.numeric_edges of {key[:40]!r} must be increasing numbers",
                path=path,
                field="feature_dicts",
            )
    if meta["templates"] != "":
        raise ModelFormatError("a model fitted on feature dicts stores no templates", path=path, field="templates")
    return [*keys, TRANSITION_GROUP]


def _check_tagger_file(arrays, meta, path):
    """Consistency of a SequenceTagger file: templates (or, fitted on feature dicts, the dict keys
    and bin edges), feature groups (one per distinct template name or key), the bigram dictionary
    of input-conditioned bigram templates, labels, template weights."""
    from problems.sequence.templates import parse_templates, template_groups

    if "feature_dicts" in meta:
        names = _feature_dict_groups(meta, path)
        _check_bigram_arrays(arrays, False, len(names), path)
    else:
        try:
            templates = parse_templates(meta["templates"], path=path)
        except InputError as exc:
            raise ModelFormatError(
                f"stored templates do not parse: {exc.message}", path=path, field="templates"
            ) from None
        names = template_groups(templates)
        _check_bigram_arrays(arrays, FeatureIndex(templates).conditioned, len(names), path)
    n = arrays["feature_names"].shape[0]
    groups, offsets = arrays["feature_groups"], arrays["group_offsets"]
    if groups.shape != (n,):
        raise ModelFormatError(
            f"feature_groups has shape {groups.shape}, expected ({n},)", path=path, field="feature_groups"
        )
    if (
        offsets.shape != (len(names) + 1,)
        or offsets[0] != 0
        or offsets[-1] != n
        or np.any(np.diff(offsets.astype(np.int64)) < 0)
    ):
        raise ModelFormatError(
            f"group_offsets must rise from 0 to {n} in {len(names) + 1} entries (one group per template name)",
            path=path,
            field="group_offsets",
        )
    expected = np.repeat(np.arange(len(names)), np.diff(offsets.astype(np.int64)))
    if not np.array_equal(groups, expected):
        raise ModelFormatError("feature_groups disagree with group_offsets", path=path, field="feature_groups")
    if len(set(arrays["feature_names"].tolist())) != n:
        raise ModelFormatError("duplicate feature names", path=path, field="feature_names")
    labels = arrays["labels"].tolist()
    if not labels or len(set(labels)) != len(labels):
        raise ModelFormatError("labels must be non-empty and distinct", path=path, field="labels")
    if not all(isinstance(a, str) for a in meta["active_templates"]) or not set(meta["active_templates"]) <= set(names):
        raise ModelFormatError(
            "active_templates must be names of the stored templates", path=path, field="active_templates"
        )
    weights = meta["template_weights"]
    if not all(json_type_ok(v, (float,)) for v in weights.values()):
        raise ModelFormatError(
            "template_weights must map template names to numbers", path=path, field="template_weights"
        )
    min_count = meta["params"].get("min_count", 1)
    if min_count != "auto" and (not json_type_ok(min_count, (int,)) or min_count < 1):
        raise ModelFormatError(
            f"params.min_count must be an integer >= 1 or 'auto', got {str(min_count)[:40]!r}",
            path=path,
            field="params",
        )


def _check_bigram_arrays(arrays, conditioned, n_groups, path):
    """The bigram dictionary is stored exactly when the templates are input-conditioned, with one
    group per feature (contiguous, non-decreasing) and distinct names."""
    present = [k for k in ("bigram_feature_names", "bigram_feature_groups") if k in arrays]
    if not conditioned:
        if present:
            raise ModelFormatError(
                f"{present[0]} is stored but the templates have no input-conditioned bigram",
                path=path,
                field=present[0],
            )
        return
    for key, kinds in (("bigram_feature_names", "U"), ("bigram_feature_groups", "iu")):
        if key not in arrays:
            raise ModelFormatError(
                f"required array {key!r} is missing (the templates have input-conditioned bigrams)",
                path=path,
                field=key,
            )
        if arrays[key].dtype.kind not in kinds or arrays[key].ndim != 1:
            raise ModelFormatError(f"array {key!r} must be one-dimensional of kind {kinds!r}", path=path, field=key)
    bnames, bgroups = arrays["bigram_feature_names"], arrays["bigram_feature_groups"]
    if bgroups.shape != bnames.shape:
        raise ModelFormatError(
            f"bigram_feature_groups has shape {bgroups.shape}, expected {bnames.shape}",
            path=path,
            field="bigram_feature_groups",
        )
    g = bgroups.astype(np.int64)
    if g.size and (g.min() < 0 or g.max() >= n_groups or np.any(np.diff(g) < 0)):
        raise ModelFormatError(
            f"bigram_feature_groups must be non-decreasing group ids in [0, {n_groups})",
            path=path,
            field="bigram_feature_groups",
        )
    if len(set(bnames.tolist())) != bnames.shape[0]:
        raise ModelFormatError("duplicate bigram feature names", path=path, field="bigram_feature_names")


_NUM = (float, type(None))
#: What a SequenceTagger model file must hold (passed to :func:`problems.model_io.load_model`);
#: ``params`` may hold the solver options of format-version-1 files too.
_MODEL_SCHEMA = ModelSchema(
    arrays={
        "coef": ("f", 1),
        "feature_names": ("U", 1),
        "feature_groups": ("iu", 1),
        "group_offsets": ("iu", 1),
        "labels": ("U", 1),
    },
    meta={
        "templates": (str,),
        "params": (dict,),
        "template_weights": (dict,),
        "active_templates": (list,),
        "objective": _NUM,
        "lower_bound": _NUM,
        "gap": _NUM,
        "n_iter": (int,),
    },
    params_of=PARAM_NAMES | LEGACY_SOLVER_KEYS,
    check=_check_tagger_file,
    optional_meta={**SELECTION_META, "feature_dicts": (dict,)},
)

#: What a SequenceTagger model file must hold (passed to :func:`problems.model_io.load_model`).
MODEL_SCHEMA = _MODEL_SCHEMA


def restricted_index(index: FeatureIndex, keep) -> FeatureIndex:
    """A view of a fitted index that extracts only the templates ``keep`` (same feature ids).

    Feature strings carry their template's name, so the full vocabulary maps the strings of
    the kept templates to the same ids; the others are never built.
    """
    sub = FeatureIndex([index.templates[j] for j in keep], min_count=index.min_count)
    sub.vocabulary_ = index.vocabulary_
    sub.n_features_ = index.n_features_
    sub.bigram_vocabulary_ = index.bigram_vocabulary_
    return sub


def is_dict_index(index) -> bool:
    """Whether ``index`` is the feature index of a model fitted on feature dicts."""
    from problems.sequence.feature_dicts import DictFeatureIndex

    return isinstance(index, DictFeatureIndex)


def check_corpus(X, y=None, *, name="X"):
    """Sentences as lists of token rows (tuples of str) and, when given, matching label lists
    (:func:`problems.validation.check_sequences`: equal row widths, str cells, one label per token),
    or sentences of feature dicts (:func:`problems.sequence.feature_dicts.check_feature_dicts`)."""
    from problems.sequence.feature_dicts import check_feature_dicts, is_feature_dict_corpus
    from problems.validation import check_sequences

    if is_feature_dict_corpus(X):
        return check_feature_dicts(X, y, name=name)
    return check_sequences(X, y, name=name)


def decode(model, X, *, all_templates=False) -> list:
    """Label sequences (lists of str) of the sentences ``X`` by Viterbi under a fitted model
    (``feature_index_``, ``labels_``, ``coef_``, ``active_templates_``); templates of zero
    weight are not extracted unless ``all_templates`` (the labels are the same).

    Raises
    ------
    InputError
        Malformed sentences, or feature dicts for a templates' model (token rows for a model
        fitted on feature dicts).
    """
    from oracles.sequence import viterbi_decode
    from problems.sequence.feature_dicts import is_feature_dict_corpus

    X, _ = check_corpus(X)
    index = model.feature_index_
    dicts = is_dict_index(index)
    if is_feature_dict_corpus(X) != dicts:
        fitted, given = ("feature dicts", "token rows") if dicts else ("token rows", "feature dicts")
        raise InputError(f"the model was fitted on {fitted}, X holds {given}", field="X")
    if dicts:
        feats = index.transform(X, keys=None if all_templates else model.active_templates_)
    else:
        if not all_templates:
            active = set(model.active_templates_)
            keep = [j for j, t in enumerate(index.templates) if t.name in active or t.kind == "B"]
            index = restricted_index(index, keep)
        feats = index.transform(X)
    codes = viterbi_decode(
        model.coef_,
        feats.indptr,
        feats.indices,
        feats.sentence_ptr,
        feats.n_features,
        len(model.labels_),
        transitions=model.feature_index_.has_transitions,
        bigram_features=feats.bigram_features,
        values=feats.values,
    )
    ptr = feats.sentence_ptr
    return [model.labels_.decode(codes[ptr[i] : ptr[i + 1]]) for i in range(len(X))]


def read_model_parts(arrays, meta, path, min_count: int):
    """``(feature_index, labels, coef)`` of a checked SequenceTagger file (``arrays, meta`` of
    :func:`problems.model_io.load_model` with :data:`MODEL_SCHEMA`); ``min_count`` is the cutoff
    the index records (it does not change what the index extracts).

    Raises
    ------
    ModelFormatError
        ``coef`` of another length than the features and labels give.
    """
    idx: Any  # a FeatureIndex, or a DictFeatureIndex for a model of feature dicts
    dicts = "feature_dicts" in meta
    if dicts:
        from problems.sequence.feature_dicts import DictFeatureIndex

        # files written before real-valued numbers have no "numbers": they binned
        idx = DictFeatureIndex(min_count=min_count, numbers=meta["feature_dicts"].get("numbers", "bins"))
        idx.keys_ = list(meta["feature_dicts"]["keys"])
        edges = meta["feature_dicts"]["numeric_edges"]
        idx.numeric_edges_ = {k: np.asarray(v, dtype=np.float64) for k, v in edges.items()}
    else:
        idx = FeatureIndex(meta["templates"], min_count=min_count)
    names = [str(s) for s in arrays["feature_names"]]
    idx.vocabulary_ = {s: k for k, s in enumerate(names)}
    idx.n_features_ = len(names)
    idx.feature_groups_ = np.asarray(arrays["feature_groups"], dtype=np.int32)
    idx.group_offsets_ = np.asarray(arrays["group_offsets"], dtype=np.int64)
    if not dicts:
        bnames = [str(s) for s in arrays.get("bigram_feature_names", np.zeros(0, dtype=str))]
        idx.bigram_vocabulary_ = {s: k for k, s in enumerate(bnames)}
        idx.bigram_feature_groups_ = np.asarray(arrays.get("bigram_feature_groups", np.zeros(0)), dtype=np.int32)
    labels = LabelAlphabet([str(s) for s in arrays["labels"]])
    coef = np.asarray(arrays["coef"], dtype=np.float64)
    if coef.shape != (idx.dim(len(labels)),):
        raise ModelFormatError(
            f"coef has shape {coef.shape}, expected ({idx.dim(len(labels))},)", path=path, field="coef"
        )
    return idx, labels, coef


class TaggerModel:
    """A saved SequenceTagger (or SequenceTaggerCV) model that labels sentences, read without
    scikit-learn (:meth:`load`); what the command line applies.

    Attributes
    ----------
    templates : str or None
        The stored CRF++ templates; None for a model fitted on feature dicts.
    feature_index_, labels_, coef_, active_templates_, template_weights_
        As the estimator's.
    objective_, lower_bound_, gap_ : float or None
        The training's certificate (scale F).
    meta : dict
        The file's metadata.
    """

    meta: dict
    templates: str | None
    feature_index_: Any
    labels_: LabelAlphabet
    coef_: np.ndarray
    template_weights_: dict
    active_templates_: list
    objective_: float | None
    lower_bound_: float | None
    gap_: float | None

    @classmethod
    def load(cls, path) -> TaggerModel:
        """Read and check a model file of SequenceTagger / SequenceTaggerCV (the checks of
        ``SequenceTagger.load`` on the file; the hyper-parameters are not turned into an
        estimator).

        Raises
        ------
        ModelFormatError
            Another estimator's file, or a file failing :data:`MODEL_SCHEMA`.
        """
        from problems.model_io import load_model

        arrays, meta = load_model(path)
        if meta["estimator"] not in _MODEL_NAMES:
            raise ModelFormatError(
                f"the file holds a {meta['estimator'][:80]} model, expected {' or '.join(_MODEL_NAMES)}",
                path=path,
                field="estimator",
            )
        check_schema(MODEL_SCHEMA, arrays, meta, path)
        min_count = meta["params"].get("min_count", 1)
        self = cls()
        self.meta = meta
        self.templates = None if "feature_dicts" in meta else meta["templates"]
        # "auto" is resolved by the estimator (from its regulariser); predicting does not need it
        self.feature_index_, self.labels_, self.coef_ = read_model_parts(
            arrays, meta, path, min_count if isinstance(min_count, int) else 1
        )
        self.template_weights_ = dict(meta["template_weights"])
        self.active_templates_ = list(meta["active_templates"])
        self.objective_, self.lower_bound_, self.gap_ = meta["objective"], meta["lower_bound"], meta["gap"]
        return self

    def predict(self, X, *, all_templates=False) -> list:
        """Label sequences of ``X``, as ``SequenceTagger.predict`` (:func:`decode`)."""
        return decode(self, X, all_templates=all_templates)
