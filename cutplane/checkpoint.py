"""Checkpoints of the cutting-plane loop: save, verify and restore everything needed to resume.

A checkpoint is one ``.npz`` archive (never pickled) holding the numeric state and a JSON
metadata entry:

- the working set: offsets, duals and idle counts of the cuts, and the slopes (sparse slopes
  in the compact form of :func:`cutplane.working_set.working_set_state` with ``compact=True``:
  index gaps in one byte, integer counts in one byte with a scale per row, the rare value that
  does not fit listed apart; dense ones as a (n_cuts, dim) block);
- the next query point ``w``, the best point ``best_w`` (each, when it has at least
  :data:`PACK_MIN_DIM` coordinates and mostly zeros, as a bit mask of its nonzero coordinates
  and their values; ``best_w`` not at all when it equals ``w`` bit for bit), the bounds and the
  per-iteration history, the solver counters;
- a pending iteration (a cut already added whose reduced problem was not solved yet), the
  step strategy's state and the oracle's random generator state, if any.

The metadata names the format and its version, the problem's ``dim``, a *fingerprint* of the
oracle and regulariser settings (:func:`cutplane.fingerprint.fingerprint`) and a SHA-256 checksum of the payload
(every array and the rest of the metadata). Files are written atomically: a temporary file in
the same folder, flushed and ``fsync``-ed, then renamed over the target. Loading verifies the
format, version, checksum, shapes and the fingerprint and raises
:class:`~cutplane.exceptions.ModelFormatError` with a clear message otherwise. Format version 2
is the compact form (a 1000-sentence CoNLL-2000 run: about a fifth of version 1's bytes, written
faster); version 1 files (float64 CSR slopes, dense vectors) still load, to the same state.

:class:`Checkpointer` is the engine's side: where and how often it saves, and the restore for
``resume``. Signals during a run are handled by :class:`cutplane.interrupt.InterruptGuard`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .exceptions import InputError, ModelFormatError
from .fingerprint import update_hash
from .npz_io import write_npz_atomic
from .result import FallbackRecord, HistoryRow
from .working_set import WorkingSet, working_set_from_state, working_set_state
from .working_set.state import expand_slopes

__all__ = [
    "EngineState",
    "save_checkpoint",
    "load_checkpoint",
    "working_set_state",
    "working_set_from_state",
    "Checkpointer",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "PACK_MIN_DIM",
]

logger = logging.getLogger("cutplane")

FORMAT_NAME = "cutplane-checkpoint"
FORMAT_VERSION = 2
#: ``w`` and ``best_w`` of at least this many coordinates are stored as a mask and their nonzeros
#: when that is smaller (a problem this small is stored as it is: the saving would be bytes).
PACK_MIN_DIM = 4096
_META = "__meta__"
_HISTORY_COLUMNS = 13
#: Checkpoints written before the history kept wall and CPU seconds have 10 columns, before it
#: kept the bytes sent 12; they load with the missing columns NaN.
_OLD_HISTORY_COLUMNS = (10, 12)


@dataclass
class EngineState:
    """The mutable state of one :func:`cutplane.minimize` run (what a checkpoint holds).

    Attributes
    ----------
    working_set : WorkingSet
    w : ndarray of shape (dim,)
        The next query point (with ``pending``: the point whose cut was just added).
    best_w : ndarray of shape (dim,)
    best_upper, lower : float
        Best upper bound ``F(best_w)`` and the certified lower bound.
    exact : bool
        False once an oracle returned an inexact cut.
    rows : list of HistoryRow
        Per-iteration history rows (:class:`cutplane.result.HistoryRow`).
    fallbacks : list of FallbackRecord
    n_calls, n_searches : int
        Oracle calls and line searches so far.
    oracle_time, solver_time, elapsed : float
        Seconds in the oracle, in reduced solves, and in total, over all resumed runs.
    peak_bytes : int
        Peak working-set memory so far.
    pending : tuple of (float, float) or None
        ``(upper, t_oracle)`` of an iteration whose cut is in the working set but whose
        reduced problem was not solved (an interrupt during the solve).
    step_state : dict
        JSON-serialisable state of the step strategy.
    rng_state : dict or None
        ``bit_generator.state`` of the oracle's ``rng`` attribute, if it has one.
    backend : str or None
    alpha, mu : ndarray or None
        Duals and group weights of the last reduced solve.
    """

    working_set: WorkingSet
    w: np.ndarray
    best_w: np.ndarray
    best_upper: float = np.inf
    lower: float = -np.inf
    exact: bool = True
    rows: list = field(default_factory=list)
    fallbacks: list = field(default_factory=list)
    n_calls: int = 0
    n_searches: int = 0
    oracle_time: float = 0.0
    solver_time: float = 0.0
    elapsed: float = 0.0
    peak_bytes: int = 0
    pending: tuple | None = None
    step_state: dict = field(default_factory=dict)
    rng_state: dict | None = None
    backend: str | None = None
    alpha: np.ndarray | None = None
    mu: np.ndarray | None = None
    memory_warned: bool = False  # not saved: the budget warning is logged once per run
    n_cached_cuts: int = 0  # not saved: counted per call (a resumed run counts from 0)
    cache_time: float = 0.0  # not saved, as n_cached_cuts
    known_omega: tuple | None = None  # (w, Omega(w)) from the last reduced solve; not saved
    lower_at_prune: float = -np.inf  # the lower bound at the last pruning; not saved (a resumed run
    # may prune at its first boundary: the rule needs a strict rise between drops from there on)

    @property
    def n_iter(self) -> int:
        """Iterations whose oracle call is done (the pending one included)."""
        return len(self.rows) + (self.pending is not None)


# ------------------------------------------------------------------ save / load
def _checksum(arrays, meta) -> str:
    h = hashlib.sha256()
    h.update(json.dumps(meta, sort_keys=True).encode())
    for name in sorted(arrays):
        h.update(name.encode())
        update_hash(h, arrays[name])
    return h.hexdigest()


def _history_row(values) -> HistoryRow:
    """A saved history row (older files have fewer columns: the missing ones are NaN)."""
    row = list(values) + [np.nan] * (_HISTORY_COLUMNS - len(values))
    row[6] = int(row[6])  # n_cuts
    return HistoryRow(*row)


def _opt(value):
    return np.zeros(0) if value is None else np.asarray(value, dtype=np.float64).ravel()


def _pack_vector(arrays, name, x) -> None:
    """``x`` (float64) into ``arrays``: as ``name``, or as ``name_mask`` (packed bits of its
    nonzero coordinates, -0.0 included) and ``name_nonzero`` when it has at least
    :data:`PACK_MIN_DIM` coordinates and that takes fewer bytes."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.size >= PACK_MIN_DIM:
        nz = x.view(np.uint64) != 0
        n_nz = int(np.count_nonzero(nz))
        if (x.size + 7) // 8 + 8 * n_nz < 8 * x.size:
            arrays[name + "_mask"] = np.packbits(nz)
            arrays[name + "_nonzero"] = x[nz]
            return
    arrays[name] = x


def _unpack_vector(arrays, name, dim) -> None:
    """The inverse of :func:`_pack_vector`, in place (ValueError when the parts do not fit)."""
    if name + "_mask" not in arrays:
        return
    mask = np.unpackbits(arrays.pop(name + "_mask"), count=dim).astype(bool)
    nonzero = arrays.pop(name + "_nonzero")
    if nonzero.shape != (int(np.count_nonzero(mask)),):
        raise ValueError(f"{name}: the nonzeros do not match the mask")
    x = np.zeros(dim)
    x[mask] = nonzero
    arrays[name] = x


def _expanded(arrays, meta, dim):
    """A version-2 file's arrays in version 1's form (CSR slopes, dense ``w`` and ``best_w``)."""
    arrays = expand_slopes(dict(arrays), dim)
    _unpack_vector(arrays, "w", dim)
    if meta.get("best_w_is_w"):
        arrays["best_w"] = arrays["w"]
    _unpack_vector(arrays, "best_w", dim)
    return arrays


def save_checkpoint(path, state: EngineState, *, fingerprint: str, method: str) -> Path:
    """Write ``state`` to ``path`` atomically (temporary file, fsync, rename), in the compact form
    of format version 2 (the module docstring)."""
    path = Path(path)
    ws = state.working_set
    arrays = working_set_state(ws, compact=True) if ws.n_cuts else {}
    rows = np.array(state.rows, dtype=np.float64).reshape(-1, _HISTORY_COLUMNS)
    w = np.ascontiguousarray(state.w, dtype=np.float64)
    best_w = np.ascontiguousarray(state.best_w, dtype=np.float64)
    best_w_is_w = w.shape == best_w.shape and np.array_equal(w.view(np.uint64), best_w.view(np.uint64))
    _pack_vector(arrays, "w", w)
    if not best_w_is_w:
        _pack_vector(arrays, "best_w", best_w)
    arrays.update(
        history=rows,
        alpha=_opt(state.alpha),
        mu=_opt(state.mu),
        scalars=np.array([state.best_upper, state.lower, state.oracle_time, state.solver_time, state.elapsed]),
        pending=np.array(state.pending if state.pending is not None else [], dtype=np.float64),
    )
    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "dim": int(ws.dim),
        "method": method,
        "fingerprint": fingerprint,
        "n_iter": len(state.rows),
        "n_cuts": int(ws.n_cuts),
        "n_groups": int(ws.n_groups),
        "sparse": ws.sparse,
        "exact": bool(state.exact),
        "n_calls": int(state.n_calls),
        "n_searches": int(state.n_searches),
        "peak_bytes": int(state.peak_bytes),
        "fallbacks": [[int(f.iteration), str(f.backend), str(f.reason)] for f in state.fallbacks],
        "step_state": state.step_state,
        "rng_state": state.rng_state,
        "backend": state.backend,
        "has_alpha": state.alpha is not None,
        "has_mu": state.mu is not None,
        "best_w_is_w": bool(best_w_is_w),
        "arrays": {k: [list(a.shape), a.dtype.str] for k, a in arrays.items()},
    }
    meta["checksum"] = _checksum(arrays, meta)
    text = json.dumps(meta, sort_keys=True)
    return write_npz_atomic(path, {**arrays, _META: np.array(text)})


def _fail(msg, path, field=None):
    raise ModelFormatError(msg, path=path, field=field)


def _read(path):
    try:
        with np.load(path, allow_pickle=False) as data:
            if _META not in data.files:
                _fail("not a cutplane checkpoint (no metadata entry)", path)
            raw = data[_META]
            arrays = {k: data[k] for k in data.files if k != _META}
    except ModelFormatError:
        raise
    except FileNotFoundError:
        _fail("checkpoint file not found", path)
    except Exception as exc:  # noqa: BLE001 - a damaged zip can fail anywhere in zipfile / numpy
        _fail(f"checkpoint is truncated or corrupted and was not used ({type(exc).__name__}: {exc})", path)
    if raw.dtype.kind != "U" or raw.shape != ():
        _fail("checkpoint metadata is not a JSON string", path, _META)
    try:
        meta = json.loads(str(raw))
    except json.JSONDecodeError as exc:
        _fail(f"checkpoint metadata is not valid JSON ({exc})", path, _META)
    if not isinstance(meta, dict):
        _fail("checkpoint metadata is not a JSON object", path, _META)
    return arrays, meta


def _check_header(arrays, meta, path, dim, fp):
    if meta.get("format") != FORMAT_NAME:
        _fail(f"not a cutplane checkpoint (format {meta.get('format')!r})", path, "format")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FORMAT_VERSION:
        _fail(
            f"unsupported checkpoint format_version {version!r} (this version reads 1..{FORMAT_VERSION})",
            path,
            "format_version",
        )
    stored = meta.pop("checksum", None)
    if stored != _checksum(arrays, meta):
        _fail("checksum mismatch: the checkpoint is corrupted and was not used", path, "checksum")
    if meta.get("dim") != dim:
        _fail(f"checkpoint is for a problem of dim {meta.get('dim')}, this one has dim {dim}", path, "dim")
    if meta.get("fingerprint") != fp:
        _fail(
            "checkpoint was written for a different problem (oracle data, regulariser, lam, method or "
            "its options differ); delete it or train without resume",
            path,
            "fingerprint",
        )


def _check_shapes(arrays, meta, path, dim):
    n, r = meta.get("n_cuts"), meta.get("n_iter")
    expect = {"w": (dim,), "best_w": (dim,), "scalars": (5,), "history": (r, _HISTORY_COLUMNS)}
    for old in _OLD_HISTORY_COLUMNS:
        if getattr(arrays.get("history"), "shape", None) == (r, old):
            expect["history"] = (r, old)
    if n:
        expect.update(ws_offsets=(n,), ws_duals=(n,), ws_idle=(n,))
        if meta.get("sparse"):
            expect["ws_indptr"] = (n + 1,)
        else:
            expect["ws_dense"] = (n, dim)
        if "ws_residual_norms" in arrays or "ws_exact_offsets" in arrays:  # cuts rounded to float32
            expect.update(ws_exact_offsets=(n,), ws_residual_norms=(n,))
    for name, shape in expect.items():
        if name not in arrays or arrays[name].shape != shape:
            got = arrays[name].shape if name in arrays else "missing"
            _fail(f"array {name!r} has shape {got}, expected {shape}", path, name)
    if "pending" not in arrays or arrays["pending"].shape not in ((0,), (2,)):
        _fail("array 'pending' must have 0 or 2 entries", path, "pending")
    floats = [k for k in arrays if arrays[k].dtype.kind == "f" and k != "scalars"]
    if not all(np.all(np.isfinite(arrays[k])) for k in floats if k != "history"):
        _fail("checkpoint holds NaN or infinite values", path)
    if n and meta.get("sparse"):
        ip, ix = arrays["ws_indptr"], arrays["ws_indices"]
        if (
            ip[0] != 0
            or ip[-1] != ix.shape[0]
            or np.any(np.diff(ip) < 0)
            or arrays["ws_data"].shape != ix.shape
            or (ix.size and (ix.min() < 0 or ix.max() >= dim))
        ):
            _fail("inconsistent sparse slopes (indptr, indices, data)", path, "ws_indptr")


def load_checkpoint(path, *, dim, fingerprint, groups=None) -> EngineState:
    """Read and verify a checkpoint written by :func:`save_checkpoint`.

    Parameters
    ----------
    path : str or os.PathLike
    dim : int
        The problem's dimension; must match the file's.
    fingerprint : str
        :func:`~cutplane.fingerprint.fingerprint` of the problem being resumed; must match the file's.
    groups : ndarray of shape (dim,), optional
        Coordinate groups of the regulariser (per-group Gram blocks).

    Raises
    ------
    ModelFormatError
        Truncated or corrupted file, checksum mismatch, unknown version, wrong shapes, or a
        checkpoint of a different problem.
    """
    path = Path(path)
    arrays, meta = _read(path)
    _check_header(arrays, meta, path, int(dim), fingerprint)
    try:
        arrays = _expanded(arrays, meta, int(dim))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        _fail(f"checkpoint content is inconsistent ({type(exc).__name__}: {exc})", path)
    _check_shapes(arrays, meta, path, int(dim))
    try:
        ws = (
            working_set_from_state(arrays, int(dim), groups=groups)
            if meta["n_cuts"]
            else WorkingSet(int(dim), groups=groups)
        )
        if ws.n_groups != meta["n_groups"]:
            _fail(
                f"checkpoint has {meta['n_groups']} coordinate groups, the regulariser {ws.n_groups}", path, "n_groups"
            )
        s = arrays["scalars"]
        pending = arrays["pending"]
        state = EngineState(
            working_set=ws,
            w=arrays["w"].copy(),
            best_w=arrays["best_w"].copy(),
            best_upper=float(s[0]),
            lower=float(s[1]),
            exact=bool(meta["exact"]),
            rows=[_history_row(row) for row in arrays["history"].tolist()],
            fallbacks=[FallbackRecord(int(i), str(b), str(r)) for i, b, r in meta["fallbacks"]],
            n_calls=int(meta["n_calls"]),
            n_searches=int(meta["n_searches"]),
            oracle_time=float(s[2]),
            solver_time=float(s[3]),
            elapsed=float(s[4]),
            peak_bytes=int(meta["peak_bytes"]),
            pending=None if pending.size == 0 else (float(pending[0]), float(pending[1])),
            step_state=dict(meta["step_state"] or {}),
            rng_state=meta["rng_state"],
            backend=meta["backend"],
            alpha=arrays["alpha"].copy() if meta["has_alpha"] else None,
            mu=arrays["mu"].copy() if meta["has_mu"] else None,
        )
    except ModelFormatError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        _fail(f"checkpoint content is inconsistent ({type(exc).__name__}: {exc})", path)
    return state


# ------------------------------------------------------------------ the engine's saver
class Checkpointer:
    """Where and how often :func:`cutplane.minimize` saves its state; restores it for ``resume``.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint file; its folder must exist.
    every : int
        Iterations between two saves (the engine reads ``self.every``).
    method : str
        The engine method, stored in the file.
    oracle : Oracle
        Its ``rng`` attribute (a ``numpy.random.Generator``), if any, is saved and restored.
    step : step strategy
        Has ``get_state()`` / ``set_state(dict)`` (:mod:`cutplane.steps`).
    fp : str
        :func:`~cutplane.fingerprint.fingerprint` of the problem.
    """

    def __init__(self, path, every, method, oracle, step, fp):
        self.path, self.every, self.method = Path(path), every, method
        self.oracle, self.step, self.fingerprint = oracle, step, fp
        if not self.path.parent.is_dir():
            raise InputError(f"the folder of the checkpoint does not exist: {self.path.parent}", field="checkpoint")

    def _rng(self):
        rng = getattr(self.oracle, "rng", None)
        return rng if isinstance(rng, np.random.Generator) else None

    def save(self, st, elapsed):
        """Write ``st`` (an :class:`EngineState`) with ``elapsed`` seconds so far, atomically."""
        st.elapsed = float(elapsed)
        st.step_state = self.step.get_state()
        rng = self._rng()
        st.rng_state = None if rng is None else rng.bit_generator.state
        save_checkpoint(self.path, st, fingerprint=self.fingerprint, method=self.method)

    def restore(self, dim, groups, step):
        """The saved :class:`EngineState` (step and rng states restored), or None when there is
        no file yet; a damaged or foreign file raises :class:`~cutplane.exceptions.ModelFormatError`."""
        if not self.path.exists():
            logger.info("no checkpoint at %s yet: starting from scratch", self.path)
            return None
        st = load_checkpoint(self.path, dim=dim, fingerprint=self.fingerprint, groups=groups)
        step.set_state(st.step_state)
        rng = self._rng()
        if rng is not None and st.rng_state is not None:
            rng.bit_generator.state = st.rng_state
        logger.info("resuming from %s at iteration %d", self.path, st.n_iter)
        return st
