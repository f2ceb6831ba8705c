"""The package's own exception and warning types.

Every error that bad input can provoke is raised as one of these, so callers can
catch ``cutplane.exceptions.CutplaneError`` and nothing deeper leaks out.
"""

from __future__ import annotations

__all__ = [
    "CutplaneError",
    "InputError",
    "InputTypeError",
    "ModelFormatError",
    "SolverError",
    "ConvergenceWarning",
    "InexactCutWarning",
]


class CutplaneError(Exception):
    """Base class of all errors raised by cutplane, oracles and problems."""


class InputError(CutplaneError, ValueError):
    """Bad input: a file, an array or a hyper-parameter that breaks the contract.

    Parameters
    ----------
    message : str
        What was expected and what was found.
    path : str or os.PathLike, optional
        The file the bad input came from.
    line : int, optional
        1-based line number in ``path``.
    field : str, optional
        Column, argument or field name.

    Notes
    -----
    The string form is ``"path:line: field: message"`` with absent parts left out,
    the convention of compilers and linters, so editors can jump to the spot.
    """

    def __init__(self, message, *, path=None, line=None, field=None):
        self.message = str(message)
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        super().__init__(self._format())

    def _format(self):
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        if self.field is not None:
            where += f"{self.field}: "
        return where + self.message


class InputTypeError(InputError, TypeError):
    """Bad input of a kind that cannot be converted at all (e.g. a dict where a number is expected).

    A :class:`InputError` that is also a :class:`TypeError`, where scikit-learn's contract
    expects one (``float()`` of an object that is not a number); same parameters.
    """


class ModelFormatError(InputError):
    """A saved model or checkpoint that is truncated, corrupted or of an unknown version."""


class SolverError(CutplaneError):
    """Every backend failed on a reduced problem (the message lists each attempt)."""


class ConvergenceWarning(UserWarning):
    """A solver stopped (max_iter, time limit) before its certified gap reached eps."""


class InexactCutWarning(UserWarning):
    """An oracle returned an approximate cut; the certificate is relative to it."""
