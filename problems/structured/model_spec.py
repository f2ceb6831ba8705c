"""A user's structured model in a model file: its class by import path and its constructor parameters.

:class:`~problems.structured.StructuredSVM` saves the model it was trained with as
``{"class": "module:qualname", "params": {...}}`` (:func:`model_to_meta`) and rebuilds it on load
by importing the class and calling it with the parameters (:func:`model_from_meta`); nothing is
unpickled. The parameters are the model's ``get_params()`` when it has one (scikit-learn's
convention), else the entries of its ``__dict__`` that name a parameter of its constructor and
hold JSON values (numbers, strings, booleans, None, and lists and dicts of them; numpy scalars
are stored as Python numbers, arrays are not stored). A model whose constructor needs anything
else should define ``get_params()`` returning JSON values.

Loading a model file imports the module it names, as ``import module`` would: load files from
sources you would take code from.

The same import path form stores a ``scoring`` callable (:func:`callable_path`,
:func:`import_object`).
"""

from __future__ import annotations

import importlib
import inspect
import json

import numpy as np

from cutplane.exceptions import InputError, ModelFormatError

__all__ = [
    "REQUIRED_METHODS",
    "check_model",
    "import_path",
    "callable_path",
    "import_object",
    "model_params",
    "model_to_meta",
    "model_from_meta",
]

#: The methods a structured model must have (:class:`oracles.structured.StructuredModel`
#: gives ``loss`` a default).
REQUIRED_METHODS = ("joint_feature", "argmax", "loss", "loss_augmented_argmax")


def check_model(model, name="model"):
    """``model`` if it has the contract's attribute ``dim`` (an integer >= 1) and methods
    (:data:`REQUIRED_METHODS`).

    Raises
    ------
    InputError
        ``field=name``, naming every missing attribute and method.
    """
    missing = [] if hasattr(model, "dim") else ["dim"]
    missing += [f"{m}()" for m in REQUIRED_METHODS if not callable(getattr(model, m, None))]
    if missing:
        raise InputError(
            f"{type(model).__name__} is not a structured model (oracles.structured.StructuredModel): "
            f"it has no {', '.join(missing)}",
            field=name,
        )
    dim = model.dim
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise InputError(
            f"{type(model).__name__}.dim must be an integer >= 1 (the length of the joint feature), got {dim!r:.40}",
            field=name,
        )
    return model


def import_path(obj) -> str:
    """``"module:qualname"`` of a class or function defined at a module's top level (or nested in
    a class).

    Raises
    ------
    InputError
        ``obj`` is defined inside a function (``<locals>`` in its qualified name) or has no
        module: it could not be imported back.
    """
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        raise InputError(
            f"{qualname or obj!r} cannot be imported back by name (it is defined inside a function, or is a "
            "lambda): define it at the top level of a module",
            field="model",
        )
    return f"{module}:{qualname}"


def callable_path(func) -> str | None:
    """``"module:qualname"`` of a function that importing gives back (the same object), else None."""
    try:
        path = import_path(func)
        return path if import_object(path) is func else None
    except (InputError, ImportError, AttributeError, ValueError):
        return None


def import_object(path: str):
    """The object named ``"module:qualname"``.

    Raises
    ------
    ImportError, AttributeError, ValueError
        The module cannot be imported, it has no such name, or ``path`` has not that form.
    """
    module, sep, qualname = str(path).partition(":")
    if not sep or not module or not qualname:
        raise ValueError(f"not of the form 'module:qualname': {str(path)[:80]!r}")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _json_value(value):
    """``value`` as JSON (numpy scalars as Python numbers), or raise TypeError / ValueError."""
    if isinstance(value, np.generic):
        value = value.item()
    json.dumps(value, allow_nan=False)
    return value


def _constructor(cls):
    """The parameters of ``cls.__init__`` (without ``self``) and whether it takes ``**kwargs``."""
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return {}, True
    params = {n: p for n, p in list(sig.parameters.items())[1:] if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    return params, any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


def model_params(model) -> dict:
    """The constructor parameters of ``model`` as JSON values (see the module docstring).

    Raises
    ------
    InputError
        ``get_params()`` returned a value that is not JSON, or a constructor parameter without
        a default is not among the ``__dict__`` entries kept: the model could not be rebuilt.
    """
    name = type(model).__name__
    get_params = getattr(model, "get_params", None)
    if callable(get_params):
        try:
            raw = get_params(deep=False)
        except TypeError:
            raw = get_params()
        out = {}
        for key, value in dict(raw).items():
            try:
                out[str(key)] = _json_value(value)
            except (TypeError, ValueError):
                raise InputError(
                    f"{name}.get_params() holds {key!r} = {type(value).__name__}, not a JSON value: "
                    "a model file stores the model's constructor parameters as JSON",
                    field="model",
                ) from None
        return out
    ctor, var_kw = _constructor(type(model))
    out = {}
    for key, value in vars(model).items():
        if key.startswith("_") or (key not in ctor and not var_kw):
            continue
        try:
            out[key] = _json_value(value)
        except (TypeError, ValueError):
            continue
    needed = [k for k, p in ctor.items() if p.default is p.empty and p.kind is not p.POSITIONAL_ONLY and k not in out]
    if needed:
        raise InputError(
            f"{name} cannot be saved: its constructor parameter(s) {needed} are not attributes of the same name "
            "holding JSON values; give the model a get_params() returning them",
            field="model",
        )
    return out


def model_to_meta(model) -> dict:
    """``{"class": "module:qualname", "params": {...}}`` of a structured model (the module
    docstring says which parameters).

    Raises
    ------
    InputError
        The class cannot be imported back by name, or its parameters are not JSON
        (:func:`model_params`).
    """
    return {"class": import_path(type(model)), "params": model_params(model)}


def model_from_meta(meta, path):
    """The model stored by :func:`model_to_meta`: its class imported, called with the parameters.

    Parameters
    ----------
    meta : dict
        ``{"class": str, "params": dict}``.
    path : str or os.PathLike
        The model file (named in errors).

    Raises
    ------
    ModelFormatError
        Naming ``path`` and the class: the class cannot be imported (module not found, no such
        name, not a class), or its parameters do not rebuild it (its constructor raised) or the
        rebuilt object is not a structured model (:func:`check_model`).
    """
    if not isinstance(meta, dict) or not isinstance(meta.get("class"), str) or not isinstance(meta.get("params"), dict):
        raise ModelFormatError("model must be {'class': 'module:qualname', 'params': {...}}", path=path, field="model")
    name = meta["class"]
    try:
        cls = import_object(name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ModelFormatError(
            f"the model class {name[:120]!r} cannot be imported ({type(exc).__name__}: {str(exc)[:160]}); "
            "make its module importable (installed, or on sys.path) before loading",
            path=path,
            field="model",
        ) from None
    if not isinstance(cls, type):
        raise ModelFormatError(f"{name[:120]!r} is not a class", path=path, field="model")
    try:
        model = cls(**meta["params"])
    except Exception as exc:  # the user's constructor: whatever it raises, the parameters do not rebuild it
        raise ModelFormatError(
            f"the stored parameters {sorted(meta['params'])[:20]} do not rebuild the model class {name[:120]!r} "
            f"({type(exc).__name__}: {str(exc)[:160]})",
            path=path,
            field="model",
        ) from None
    try:
        return check_model(model)
    except InputError as exc:
        raise ModelFormatError(f"{name[:120]!r}: {exc.message}", path=path, field="model") from None
