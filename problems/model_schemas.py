"""Schemas of model files: what an estimator's file must hold beyond the generic format.

A :class:`ModelSchema` lists the arrays (dtype kinds and dimensions) and metadata keys (JSON
types) an estimator's model file must hold, the names the stored ``params`` must be among,
and an optional cross-field check; :func:`check_schema` checks a loaded file against one.
Each task declares its estimator's schema in its own subpackage (e.g.
:data:`problems.sequence.tagger.MODEL_SCHEMA`) and its ``load`` passes it to
:func:`problems.model_io.load_model`; this module knows no task. :func:`register_schema`
adds a schema to :data:`MODEL_SCHEMAS`, consulted when ``load_model`` is given none.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import NamedTuple

from cutplane.exceptions import InputError, ModelFormatError

__all__ = ["ModelSchema", "MODEL_SCHEMAS", "register_schema", "check_schema", "json_type_ok", "LEGACY_SOLVER_KEYS"]


#: The solver options that format-version-1 files hold among an estimator's ``params`` (mapped
#: into the solver on load by :func:`problems.solvers.solver_from_legacy_params`).
LEGACY_SOLVER_KEYS = frozenset(
    {
        "solver",
        "method",
        "eps",
        "max_iter",
        "time_limit",
        "max_cuts",
        "prune_after",
        "risk_floor_cut",
        "backend",
        "executor",
        "n_workers",
        "scheduler",
        "checkpoint",
        "checkpoint_every",
        "resume",
        "memory_limit",
        "verbose",
        "epochs",
        "eta0",
        "averaged",
        "seed",
    }
)


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
    params_of : str or collection of str, optional
        The names the keys of ``meta["params"]`` must be among: a collection of names, or
        ``"module:Class"`` of the estimator (its constructor parameters,
        ``Class._get_param_names()``).
    check : callable, optional
        ``check(arrays, meta, path)`` for cross-field consistency; raises ModelFormatError.
    optional_meta : dict of str to tuple of type, optional
        Metadata keys that may be absent but, when present, must have one of these types.
    """

    arrays: dict
    meta: dict
    params_of: str | Collection[str] | None = None
    check: Callable[..., None] | None = None
    optional_meta: dict = {}


#: Schemas registered with :func:`register_schema`, by the ``estimator`` name in the metadata
#: (an estimator's ``load`` may also pass its schema to :func:`problems.model_io.load_model`
#: directly, as the package's estimators do).
MODEL_SCHEMAS: dict = {}


def register_schema(estimator: str, schema: ModelSchema) -> None:
    """Declare what model files of ``estimator`` must hold (checked by :func:`load_model`)."""
    if not isinstance(schema, ModelSchema):
        raise InputError("schema must be a ModelSchema", field="schema")
    MODEL_SCHEMAS[str(estimator)] = schema


def json_type_ok(value, types) -> bool:
    """Whether a JSON value has one of ``types`` (``float`` accepts ints, ``bool`` is not an int)."""
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    return isinstance(value, types)


def check_schema(schema: ModelSchema, arrays, meta, path) -> None:
    """Raise :class:`~cutplane.exceptions.ModelFormatError` (naming ``path`` and the field)
    unless ``arrays`` and ``meta`` hold what ``schema`` requires."""
    for name, (kinds, ndim) in schema.arrays.items():
        if name not in arrays:
            raise ModelFormatError(f"required array {name!r} is missing", path=path, field=name)
        arr = arrays[name]
        if arr.dtype.kind not in kinds or (ndim is not None and arr.ndim != ndim):
            raise ModelFormatError(
                f"array {name!r} has dtype {arr.dtype} and {arr.ndim} dimension(s); "
                f"expected kind {kinds!r} with {ndim} dimension(s)",
                path=path,
                field=name,
            )
    for key, types in schema.meta.items():
        if key not in meta:
            raise ModelFormatError(f"required metadata {key!r} is missing", path=path, field=key)
        if not json_type_ok(meta[key], types):
            want = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise ModelFormatError(
                f"metadata {key!r} is {type(meta[key]).__name__}, expected {want}", path=path, field=key
            )
    for key, types in schema.optional_meta.items():
        if key in meta and not json_type_ok(meta[key], types):
            want = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise ModelFormatError(
                f"metadata {key!r} is {type(meta[key]).__name__}, expected {want}", path=path, field=key
            )
    if schema.params_of is not None and isinstance(meta.get("params"), dict):
        if isinstance(schema.params_of, str):
            import importlib

            module, _, cls_name = schema.params_of.partition(":")
            allowed = set(getattr(importlib.import_module(module), cls_name)._get_param_names())
        else:
            allowed = set(schema.params_of)
        unknown = sorted(set(meta["params"]) - allowed)
        if unknown:
            raise ModelFormatError(
                f"unknown hyper-parameters {unknown}; expected some of {sorted(allowed)}", path=path, field="params"
            )
    if schema.check is not None:
        schema.check(arrays, meta, path)
