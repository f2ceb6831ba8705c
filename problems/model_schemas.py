"""Schemas of model files: what each estimator's file must hold beyond the generic format.

A :class:`ModelSchema` lists the arrays (dtype kinds and dimensions) and metadata keys (JSON
types) an estimator's model file must hold, the estimator whose constructor parameters the
stored ``params`` must be among, and an optional cross-field check.
:data:`MODEL_SCHEMAS` holds those of the package's estimators, by the ``estimator`` name in
the metadata; :func:`register_schema` adds one. :func:`problems.model_io.load_model` checks
every file against the schema of its estimator. Moved here from :mod:`problems.model_io`,
which re-exports these names.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError, ModelFormatError

__all__ = ["ModelSchema", "MODEL_SCHEMAS", "register_schema"]



class ModelSchema(NamedTuple):
    """What an estimator's model file must hold beyond the generic format (checked on load).

    Attributes
    ----------
    arrays : dict of str to (str, int or None)
        Required array name -> (allowed dtype kinds, e.g. ``"f"`` or ``"iu"``; number of
        dimensions or None for any).
    meta : dict of str to tuple of type
        Required metadata key -> allowed JSON value types (``float`` accepts ints too; a
        ``type(None)`` entry allows ``null``).
    params_of : str, optional
        ``"module:Class"`` of the estimator; the keys of ``meta["params"]`` must be among its
        constructor parameters (``Class._get_param_names()``).
    check : callable, optional
        ``check(arrays, meta, path)`` for cross-field consistency; raises ModelFormatError.
    optional_meta : dict of str to tuple of type, optional
        Metadata keys that may be absent but, when present, must have one of these types.
    """

    arrays: dict
    meta: dict
    params_of: str | None = None
    check: object = None
    optional_meta: dict = {}


def _check_tagger(arrays, meta, path):
    """Consistency of a SequenceTagger file: templates, feature groups, labels, template weights."""
    from problems.sequence.templates import parse_templates

    try:
        templates = parse_templates(meta["templates"], path=path)
    except InputError as exc:
        raise ModelFormatError(f"stored templates do not parse: {exc.message}", path=path,
                               field="templates") from None
    names = [t.name for t in templates]
    n = arrays["feature_names"].shape[0]
    groups, offsets = arrays["feature_groups"], arrays["group_offsets"]
    if groups.shape != (n,):
        raise ModelFormatError(f"feature_groups has shape {groups.shape}, expected ({n},)", path=path,
                               field="feature_groups")
    if (offsets.shape != (len(templates) + 1,) or offsets[0] != 0 or offsets[-1] != n
            or np.any(np.diff(offsets.astype(np.int64)) < 0)):
        raise ModelFormatError(f"group_offsets must rise from 0 to {n} in {len(templates) + 1} entries "
                               "(one group per template)", path=path, field="group_offsets")
    expected = np.repeat(np.arange(len(templates)), np.diff(offsets.astype(np.int64)))
    if not np.array_equal(groups, expected):
        raise ModelFormatError("feature_groups disagree with group_offsets", path=path, field="feature_groups")
    if len(set(arrays["feature_names"].tolist())) != n:
        raise ModelFormatError("duplicate feature names", path=path, field="feature_names")
    labels = arrays["labels"].tolist()
    if not labels or len(set(labels)) != len(labels):
        raise ModelFormatError("labels must be non-empty and distinct", path=path, field="labels")
    if not all(isinstance(a, str) for a in meta["active_templates"]) or not set(meta["active_templates"]) <= set(
            names):
        raise ModelFormatError("active_templates must be names of the stored templates", path=path,
                               field="active_templates")
    weights = meta["template_weights"]
    if not all(_json_type_ok(v, (float,)) for v in weights.values()):
        raise ModelFormatError("template_weights must map template names to numbers", path=path,
                               field="template_weights")
    min_count = meta["params"].get("min_count", 1)
    if not _json_type_ok(min_count, (int,)) or min_count < 1:
        raise ModelFormatError(f"params.min_count must be an integer >= 1, got {str(min_count)[:40]!r}",
                               path=path, field="params")


_NUM = (float, type(None))
#: Schemas of the package's estimators, by the ``estimator`` name in the metadata.
MODEL_SCHEMAS: dict = {
    "LinearSVM": ModelSchema(
        arrays={"coef": ("f", 2), "intercept": ("f", 1), "classes": ("biufU", 1)},
        meta={"params": (dict,), "n_features_in": (int,)},
        params_of="problems.linear.svm:LinearSVM",
        optional_meta={"n_iter": (int,), "objective": _NUM, "lower_bound": _NUM, "gap": _NUM}),
    "SequenceTagger": ModelSchema(
        arrays={"coef": ("f", 1), "feature_names": ("U", 1), "feature_groups": ("iu", 1),
                "group_offsets": ("iu", 1), "labels": ("U", 1)},
        meta={"templates": (str,), "params": (dict,), "template_weights": (dict,), "active_templates": (list,),
              "objective": _NUM, "lower_bound": _NUM, "gap": _NUM, "n_iter": (int,)},
        params_of="problems.sequence.tagger:SequenceTagger", check=_check_tagger),
    "DependencyParser": ModelSchema(
        arrays={"coef": ("f", 1)},
        meta={"featurizer": (dict,), "params": (dict,), "template_weights": (dict,), "template_norms": (dict,),
              "active_templates": (list,), "objective": _NUM, "lower_bound": _NUM, "gap": _NUM,
              "n_iter": (int,)},
        params_of="problems.parsing.parser:DependencyParser"),
}


def register_schema(estimator: str, schema: ModelSchema) -> None:
    """Declare what model files of ``estimator`` must hold (checked by :func:`load_model`)."""
    if not isinstance(schema, ModelSchema):
        raise InputError("schema must be a ModelSchema", field="schema")
    MODEL_SCHEMAS[str(estimator)] = schema


def _json_type_ok(value, types) -> bool:
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    return isinstance(value, types)


def _check_schema(schema: ModelSchema, arrays, meta, path) -> None:
    for name, (kinds, ndim) in schema.arrays.items():
        if name not in arrays:
            raise ModelFormatError(f"required array {name!r} is missing", path=path, field=name)
        arr = arrays[name]
        if arr.dtype.kind not in kinds or (ndim is not None and arr.ndim != ndim):
            raise ModelFormatError(f"array {name!r} has dtype {arr.dtype} and {arr.ndim} dimension(s); "
                                   f"expected kind {kinds!r} with {ndim} dimension(s)", path=path, field=name)
    for key, types in schema.meta.items():
        if key not in meta:
            raise ModelFormatError(f"required metadata {key!r} is missing", path=path, field=key)
        if not _json_type_ok(meta[key], types):
            want = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise ModelFormatError(f"metadata {key!r} is {type(meta[key]).__name__}, expected {want}",
                                   path=path, field=key)
    for key, types in schema.optional_meta.items():
        if key in meta and not _json_type_ok(meta[key], types):
            want = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise ModelFormatError(f"metadata {key!r} is {type(meta[key]).__name__}, expected {want}",
                                   path=path, field=key)
    if schema.params_of is not None and isinstance(meta.get("params"), dict):
        import importlib

        module, _, cls_name = schema.params_of.partition(":")
        allowed = set(getattr(importlib.import_module(module), cls_name)._get_param_names())
        unknown = sorted(set(meta["params"]) - allowed)
        if unknown:
            raise ModelFormatError(f"unknown hyper-parameters {unknown}; expected some of {sorted(allowed)}",
                                   path=path, field="params")
    if schema.check is not None:
        schema.check(arrays, meta, path)
