"""The engine's options, each declared once: name, default, check, one line of doc, the methods it applies to.

:func:`cutplane.minimize` and :func:`cutplane.regularization_path` take them as keywords, the
estimators' solver object ``problems.solvers.CuttingPlane`` builds its constructor from them and
the command line its flags (``cutplane train --help``). Adding an option is one
:class:`Option` in :data:`OPTIONS`; the method that uses it reads it from the checked options
(:func:`check_options`).

The arguments of a call that are not tuning options (the start point ``w0``, a ``warm_start``,
a ``callback``, a ``risk_lower_bound``, the display ``progress_scale``) stay keywords of
:func:`cutplane.minimize` itself.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .exceptions import InputError

__all__ = [
    "Option",
    "OPTIONS",
    "ONE_SLACK_METHODS",
    "NSLACK",
    "option",
    "option_names",
    "check_options",
    "merge_options",
    "defaults",
    "options_doc",
    "parse_bytes",
    "DEFAULT_PLANES",
    "DEFAULT_MAX_IDLE",
]

#: The name of the n-slack method (:mod:`cutplane.nslack`).
NSLACK = "n-slack"
#: n-slack: cuts kept per example (besides the floor); a full block merges its two smallest duals.
DEFAULT_PLANES = 8
#: n-slack: iterations a cut's dual may stay zero before the cut is dropped.
DEFAULT_MAX_IDLE = 3
#: The methods over one working set of aggregated cuts (:mod:`cutplane.engine`).
ONE_SLACK_METHODS = ("bmrm", "ls-bmrm", "in-out", "kelley")


# ---------------------------------------------------------------------------- checks
def _fail(name, what, value):
    raise InputError(f"must be {what}, got {value!r}", field=name)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and bool(np.isfinite(float(value)))


def positive_number(value, name):
    """A positive finite number, as a float."""
    if _is_real(value) and float(value) > 0:
        return float(value)
    return _fail(name, "a positive finite number", value)


def positive_integer(value, name):
    """A positive integer, as an int."""
    if _is_int(value) and int(value) > 0:
        return int(value)
    return _fail(name, "a positive integer", value)


def integer_at_least(minimum: int) -> Callable[[Any, str], int]:
    """The check of an integer ``>= minimum``."""

    def check(value, name):
        if _is_int(value) and int(value) >= minimum:
            return int(value)
        return _fail(name, f"an integer >= {minimum}", value)

    return check


def number_in(low: float, high: float, *, low_open=True, high_open=True) -> Callable[[Any, str], float]:
    """The check of a number in an interval (open or closed at each end)."""
    brackets = ("(" if low_open else "[") + f"{low:g}, {high:g}" + (")" if high_open else "]")

    def check(value, name):
        if _is_real(value):
            v = float(value)
            if (v > low if low_open else v >= low) and (v < high if high_open else v <= high):
                return v
        return _fail(name, f"a number in {brackets}", value)

    return check


def flag(value, name):
    """True or False (numpy booleans included)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return _fail(name, "True or False", value)


def _method(value, name):
    """A method's name (the registry, :data:`cutplane.engine.METHODS`, knows which exist)."""
    if isinstance(value, str) and value:
        return value
    return _fail(name, "a method name", value)


def _solver(value, name):
    """A backend name, a list of names in preference order, or a ReducedSolver object."""
    from .protocols import ReducedSolver

    if isinstance(value, str) or isinstance(value, ReducedSolver):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return _fail(name, "a backend name, a list of names or a ReducedSolver", value)


def _path(value, name):
    if isinstance(value, (str, os.PathLike)):
        return value
    return _fail(name, "a file path", value)


def _average_every(value, name):
    value = integer_at_least(0)(value, name)
    if value == 1:
        raise InputError("must be 0 (never) or >= 2: every query at the average leaves nothing to average", field=name)
    return value


def parse_bytes(text: str) -> int:
    """A byte count from text: ``"500000"``, ``"512K"``, ``"64M"``, ``"2G"`` (powers of 1024; a
    trailing ``B`` or ``iB`` is allowed). ValueError, saying what was expected, otherwise."""
    t = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(t[-1:], 1)
    try:
        v = float(t[:-1] if scale > 1 else t) * scale
    except ValueError:
        raise ValueError(f"expected bytes such as 500000, 512K, 64M or 2G, got {text!r}") from None
    if not 1 <= v < float("inf"):
        raise ValueError(f"must be at least 1 byte, got {text!r}")
    return int(v)


def _parse_none_or(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse_text(text):
        return None if str(text).lower() == "none" else parse(text)

    return parse_text


# ---------------------------------------------------------------------------- declarations
@dataclass(frozen=True)
class Option:
    """One option of the engine.

    Attributes
    ----------
    name : str
        The keyword of :func:`cutplane.minimize`.
    default : object
        Its value when not given.
    check : callable
        ``check(value, name) -> value``: the normalised value, or
        :class:`~cutplane.exceptions.InputError` with ``field=name``. None passes without a
        check when ``allow_none`` is set.
    doc : str
        One line: what it does.
    methods : tuple of str or None
        The methods it applies to (None: all). Given with another method at a value other
        than its default, it is refused, naming it.
    allow_none : bool
        None is a valid value ("unset").
    param : str or None
        Its name in the solver object and on the command line when it differs from ``name``
        (the reduced-problem ``solver`` is the estimators' ``backend``).
    parse : callable or None
        Text to value for the command line (None: the type of the default, or a float).
    """

    name: str
    default: Any
    check: Callable[[Any, str], Any]
    doc: str
    methods: tuple[str, ...] | None = None
    allow_none: bool = False
    param: str | None = None
    parse: Callable[[str], Any] | None = None

    @property
    def public_name(self) -> str:
        """The name in the solver object and (with dashes) on the command line."""
        return self.param or self.name

    @property
    def flag(self) -> str:
        """The command-line flag: ``--max-iter`` for ``max_iter``."""
        return "--" + self.public_name.replace("_", "-")

    def applies_to(self, method: str) -> bool:
        """Whether ``method`` takes this option."""
        return self.methods is None or method in self.methods

    def checked(self, value):
        """``value`` normalised, or :class:`~cutplane.exceptions.InputError` naming the option."""
        if value is None and self.allow_none:
            return None
        return self.check(value, self.name)


_ONE = ONE_SLACK_METHODS
_NS = (NSLACK,)

#: Every option of the engine, in the order the documentation lists them.
OPTIONS: tuple[Option, ...] = (
    Option(
        "method",
        "bmrm",
        _method,
        "bmrm, ls-bmrm (BMRM with a line search), in-out (BMRM querying between the best point and the reduced "
        "minimiser), kelley (an indicator set) or n-slack (a working set per example)",
    ),
    Option("eps", 1e-3, positive_number, "certified absolute gap at which the run stops"),
    Option(
        "rtol",
        None,
        number_in(0.0, 1.0),
        "also stop once the certified gap is at most rtol times the best objective's magnitude, 0 < rtol < 1",
        allow_none=True,
    ),
    Option("max_iter", 1000, positive_integer, "iteration budget (oracle calls, counted over resumed runs too)"),
    Option(
        "time_limit", None, positive_number, "seconds for the run, checked before each oracle call", allow_none=True
    ),
    Option("verbose", False, flag, "show a progress counter (each iteration is logged at INFO either way)"),
    Option(
        "max_cuts",
        None,
        integer_at_least(2),
        "working-set budget: the oldest cuts are aggregated beyond it",
        _ONE,
        allow_none=True,
        parse=int,
    ),
    Option(
        "prune_after",
        15,
        positive_integer,
        "drop cuts whose dual stayed zero this many iterations (None: never)",
        _ONE,
        allow_none=True,
    ),
    Option(
        "memory_limit",
        None,
        positive_integer,
        "bytes for the working set: the oldest cuts are aggregated to fit",
        _ONE,
        allow_none=True,
        parse=parse_bytes,
    ),
    Option(
        "solver",
        None,
        _solver,
        "reduced-problem backend(s) in preference order (None: the registry's)",
        _ONE,
        allow_none=True,
        param="backend",
        parse=str,
    ),
    Option(
        "cache_steps", 0, integer_at_least(0), "cuts from the oracle's cache of recent outputs per oracle call", _ONE
    ),
    Option(
        "checkpoint",
        None,
        _path,
        "file where the run's state is saved and from which resume=True continues",
        _ONE,
        allow_none=True,
        parse=str,
    ),
    Option("checkpoint_every", 10, positive_integer, "iterations between two checkpoints", _ONE),
    Option("resume", False, flag, "continue from the checkpoint when the file exists", _ONE),
    Option(
        "theta",
        None,
        number_in(0.0, 1.0, high_open=False),
        "LS-BMRM and in-out: weight of the reduced minimiser in the next query point (None: 0.1)",
        ("ls-bmrm", "in-out"),
        allow_none=True,
    ),
    Option(
        "direct_every",
        None,
        positive_integer,
        "in-out: every this many iterations the query is the reduced minimiser itself (None: 10)",
        ("in-out",),
        allow_none=True,
        parse=int,
    ),
    Option("planes", DEFAULT_PLANES, integer_at_least(2), "n-slack: cuts kept per example besides the floor", _NS),
    Option(
        "max_idle", DEFAULT_MAX_IDLE, integer_at_least(0), "n-slack: iterations a cut may stay idle (0: never)", _NS
    ),
    Option("max_sweeps", 50, positive_integer, "n-slack: most passes of dual steps per iteration", _NS),
    Option(
        "sweep_time_ratio",
        1.0,
        number_in(0.0, 1e6, high_open=False),
        "n-slack: the passes stop after this many times the oracle's seconds (None: no time rule)",
        _NS,
        allow_none=True,
        parse=_parse_none_or(float),
    ),
    Option(
        "inner_gap",
        0.1,
        number_in(0.0, 1e6, high_open=False),
        "n-slack: the passes stop once the reduced gap is below this share of the certified gap",
        _NS,
    ),
    Option("seed", 0, integer_at_least(0), "n-slack: seed of the order of the examples in the passes", _NS),
    Option(
        "sweep_threads",
        None,
        positive_integer,
        "n-slack: threads of the passes (None: the oracle executor's workers)",
        _NS,
        allow_none=True,
        parse=int,
    ),
    Option(
        "average_every", 3, _average_every, "n-slack: every this many queries at the running average (0: never)", _NS
    ),
    Option(
        "average_decay",
        0.8,
        number_in(0.0, 1.0, low_open=False),
        "n-slack: the running average's weight on its past",
        _NS,
    ),
    Option(
        "average_below",
        0.1,
        number_in(0.0, 1e6, high_open=False),
        "n-slack: queries at the average once the relative gap is below this",
        _NS,
    ),
    Option("bound_every", 2, positive_integer, "n-slack: iterations between two recomputed lower bounds", _NS),
)

_BY_NAME = {o.name: o for o in OPTIONS}


def option(name: str) -> Option:
    """The declaration of ``name`` (KeyError if there is none)."""
    return _BY_NAME[name]


def option_names(method: str | None = None) -> tuple[str, ...]:
    """The options' names, of every method or of those ``method`` takes."""
    return tuple(o.name for o in OPTIONS if method is None or o.applies_to(method))


def defaults(method: str | None = None) -> dict:
    """The default of every option (of ``method``'s, when given)."""
    return {o.name: o.default for o in OPTIONS if method is None or o.applies_to(method)}


def _differs(value, default) -> bool:
    try:
        return bool(value != default)
    except (TypeError, ValueError):  # an array, say
        return True


def check_options(given: Mapping[str, Any], *, method: str | None = None, ignore: Iterable[str] = ()) -> dict:
    """Every option, checked: ``given`` over the defaults.

    Parameters
    ----------
    given : mapping
        Option name to value; an unknown name is refused, naming the accepted ones.
    method : str, optional
        The method of the run (default: ``given["method"]`` or the default). An option that
        does not apply to it, given at a value other than its default, is refused.
    ignore : iterable of str
        Options the caller handles itself (not checked, not returned).

    Returns
    -------
    dict
        Name to checked value, for every option ``method`` takes.

    Raises
    ------
    InputError
        ``field`` names the first bad or misplaced option.
    """
    unknown = sorted(set(given) - set(_BY_NAME))
    if unknown:
        raise InputError(
            f"unknown option(s) {', '.join(unknown)}; the engine takes {', '.join(_BY_NAME)}", field=unknown[0]
        )
    method = option("method").checked(given.get("method", "bmrm") if method is None else method)
    skip = set(ignore)
    out = {"method": method}
    for opt in OPTIONS:
        if opt.name == "method" or opt.name in skip:
            continue
        value = given.get(opt.name, opt.default)
        if not opt.applies_to(method):
            if opt.name in given and _differs(value, opt.default):
                only = " or ".join(repr(m) for m in opt.methods or ())
                raise InputError(f"applies to method {only} only, not {method!r}", field=opt.name)
            continue
        out[opt.name] = opt.checked(value)
    return out


def merge_options(options: Mapping[str, Any] | None, keywords: Mapping[str, Any], *, owner: str) -> dict:
    """The options of a call: the ``options`` dict under the keywords.

    A keyword that is not an option raises ``TypeError`` as Python does for an unexpected
    keyword of ``owner``; an unknown name in ``options`` raises
    :class:`~cutplane.exceptions.InputError` with ``field="options"``.
    """
    unknown = sorted(set(keywords) - set(_BY_NAME))
    if unknown:
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")
    if options is not None and not isinstance(options, Mapping):
        raise InputError(f"must be a dict of engine options, got {type(options).__name__}", field="options")
    unknown = sorted(set(options or {}) - set(_BY_NAME))
    if unknown:
        raise InputError(
            f"unknown option(s) {', '.join(unknown)}; the engine takes {', '.join(_BY_NAME)}", field="options"
        )
    return {**(options or {}), **keywords}


def options_doc(indent: str = "    ") -> str:
    """The options as numpydoc parameter entries (one per declaration), for docstrings."""
    lines = []
    for o in OPTIONS:
        where = "" if o.methods is None else f" ({', '.join(o.methods)})"
        lines.append(f"{indent}{o.name} : default={o.default!r}{where}")
        lines.append(f"{indent}    {o.doc[:1].upper()}{o.doc[1:]}.")
    return "\n".join(lines)
