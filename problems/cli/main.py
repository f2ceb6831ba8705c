"""The ``cutplane`` command's entry point: the argument parser over the command table and the
exit statuses.

Usage::

    cutplane --version
    cutplane train --task binary|multiclass|sequence|segment|parse --train FILE --C 1 [...] --model OUT.npz
    cutplane predict --model M.npz --input FILE [--output OUT]
    cutplane evaluate --model M.npz --test FILE [--report R.json]
    cutplane demo [--seed 0] [--out-dir DIR]
    cutplane compare --task sequence --templates T --train FILE --test FILE [...]

Each subcommand is a :class:`~problems.command_options.Command` in the explicit table
:data:`problems.cli.commands.COMMANDS` (its options and run function in its own module:
:mod:`problems.cli.train`, ...); the training tasks are the table
:data:`problems.cli.tasks.TASKS`. Bad input prints ``cutplane: error: <file:line: message>``
on stderr and exits with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import warnings

from cutplane.exceptions import CutplaneError, InputError, SolverError
from problems.cli.allocator import tune_allocator
from problems.cli.commands import COMMANDS
from problems.cli.deferred_imports import defer_unused_imports
from problems.cli.tasks import TASKS
from problems.command_options import byte_size, format_label

__all__ = ["main", "build_parser", "COMMANDS", "TASKS", "byte_size", "format_label"]

PROG = "cutplane"


def version() -> str:
    """The installed distribution's version (its metadata), else the source's ``cutplane.__version__``."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("cutplane")
    except PackageNotFoundError:  # run from a checkout that was not pip-installed
        import cutplane

        return cutplane.__version__


class _Parser(argparse.ArgumentParser):
    """An argument parser whose error is one line, ``cutplane train: error: ...``, with a hint
    to ``--help`` (argparse's own prints the whole usage first), exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Version(argparse.Action):
    """``--version``: the version looked up when the flag is given, not when the parser is built."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"{parser.prog} {version()}\n")
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with one subparser per command of :data:`COMMANDS`.

    ``command``: declare the options of that subcommand only (the others are listed with their
    help line), which is what :func:`main` parses with: setting up a command's options may import
    its task modules, and ``cutplane --help`` / ``--version`` need none of them. ``None``
    declares every command's options (the documentation, the tests of the help texts).
    """
    parser = _Parser(prog=PROG, description="Cutting-plane and bundle solvers with certified duality gaps.")
    parser.add_argument("--version", action=_Version, help="print the version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        if command is None or name == command:
            cmd.add_arguments(p)
    return parser


def _command_of(argv) -> str | None:
    """The subcommand named on the command line (its first word that is not an option: the top
    level has no option that takes a value), or None."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


@contextlib.contextmanager
def _console_logging(args):
    """Log records on stderr while a command runs: INFO and up with ``--verbose``, warnings
    when the progress counter is shown; written through ``tqdm.write`` (tqdm's
    ``logging_redirect_tqdm``) so that the lines and the counter do not interleave. The handler
    and the root level are restored afterwards."""
    from problems.command_options import show_progress

    verbose = bool(getattr(args, "verbose", False))
    if not (verbose or (hasattr(args, "quiet") and show_progress(args))):
        yield
        return
    from tqdm.contrib.logging import logging_redirect_tqdm

    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    level = root.level
    root.addHandler(handler)
    if verbose:
        root.setLevel(logging.INFO)
    try:
        with logging_redirect_tqdm():  # replaces the handler by one writing through tqdm.write
            yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def _error(message, code):
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return code


#: The exit status when standard output's reader went away (``cutplane predict ... | head``): that
#: of a Unix tool killed by SIGPIPE, 128 + 13, as the shell reports it.
EXIT_BROKEN_PIPE = 141


def _reader_gone() -> int:
    """Standard output's reader went away: exit quietly with :data:`EXIT_BROKEN_PIPE`, as Unix
    tools do. Python's flush of standard output at exit would fail again and print a traceback:
    it is pointed at the null device first (the pattern of the Python documentation's note on
    SIGPIPE)."""
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_BROKEN_PIPE


def main(argv=None) -> int:
    """Entry point of the console script; returns the exit status.

    0 on success, 2 on bad input (including bad options), 1 when every reduced-problem
    backend failed, 3 when ``train`` saved a model that did not reach its certified gap
    (:data:`problems.cli.train.EXIT_UNCERTIFIED`; ``--allow-uncertified`` gives 0), 130 on
    Ctrl-C outside the engine (inside it, the engine returns its best-so-far result instead),
    :data:`EXIT_BROKEN_PIPE` (141, quietly) when standard output's reader went away.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(words) or "")
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # argparse already printed "cutplane: error: ..." or help
        return int(exc.code or 0)
    args.argv = words  # the command line, for reports
    tune_allocator()  # before the command's threads start (problems.cli.allocator)
    if getattr(args, "executor", None) != "dask":  # dask's client thread may import pandas: the lazy
        defer_unused_imports()  # loader is not thread-safe before Python 3.12 (problems.cli.deferred_imports)
    try:
        with warnings.catch_warnings(record=True) as caught, _console_logging(args):
            warnings.simplefilter("always")
            code = COMMANDS[args.command].run(args)
            sys.stdout.flush()  # a reader gone away (``| head``) is seen here, not at exit
        for w in caught:
            if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning)):
                sys.stderr.write(f"{PROG}: warning: {w.message}\n")
        return code
    except BrokenPipeError:
        return _reader_gone()
    except InputError as exc:
        return _error(exc, 2)
    except SolverError as exc:
        return _error(f"solver failure: {exc}", 1)
    except CutplaneError as exc:
        return _error(exc, 1)
    except OSError as exc:
        return _error(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "), 2)
    except KeyboardInterrupt:
        return _error("interrupted", 130)


if __name__ == "__main__":
    sys.exit(main())
