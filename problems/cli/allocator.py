"""The C allocator of the command line's process (glibc): one malloc arena, a fixed mmap threshold.

- **One arena.** glibc gives every thread that allocates its own arena (up to 8 per core). The
  oracle's worker threads allocate the cuts' arrays (megabytes each) in their arenas, the
  engine's thread keeps the working set in the main one, and each arena keeps the memory freed
  in it for its own thread. With one arena the memory one thread frees is reused by the others.
- **A fixed mmap threshold.** glibc maps blocks above its threshold apart and unmaps them when
  they are freed, but it raises the threshold to the size of every mapped block freed (up to
  its ``DEFAULT_MMAP_THRESHOLD_MAX``): after the first dense vector is let go, every later one
  and the working set's rows are carved from the heap, whose free holes stay resident. Setting
  the threshold switches that adjustment off: large arrays go back to the system when freed.

``docs/results/plain_memory.md`` measures the plain command's peak with and without each. The
command line sets them for its own process; the library does not touch the allocator of a
program that imports it. A user's ``MALLOC_ARENA_MAX`` or ``MALLOC_MMAP_THRESHOLD_`` (read by
glibc at start-up) is left alone, and ``CUTPLANE_MALLOC=glibc`` leaves glibc's own settings in
place (:func:`tune_allocator`).
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

__all__ = ["MMAP_THRESHOLD", "fix_mmap_threshold", "tune_allocator", "use_one_malloc_arena"]

logger = logging.getLogger(__name__)

#: ``M_ARENA_MAX`` of glibc's ``<malloc.h>``.
M_ARENA_MAX = -8
#: ``M_MMAP_THRESHOLD`` of glibc's ``<malloc.h>``.
M_MMAP_THRESHOLD = -3
#: Blocks of at least this many bytes are mapped apart (1 MiB: a working set row's indices and
#: every dense vector, not the small objects).
MMAP_THRESHOLD = 1 << 20


def _mallopt(env: str):
    """glibc's ``mallopt``, or None when the user set ``env`` or the C library has none
    (musl, macOS, Windows)."""
    if env in os.environ or not sys.platform.startswith("linux"):
        return None
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt


def use_one_malloc_arena() -> bool:
    """``mallopt(M_ARENA_MAX, 1)`` on glibc, before the command starts its threads.

    Left alone when the user set ``MALLOC_ARENA_MAX`` and on a C library without ``mallopt``.
    Returns whether it was set.
    """
    mallopt = _mallopt("MALLOC_ARENA_MAX")
    if mallopt is None:
        return False
    done = bool(mallopt(M_ARENA_MAX, 1))
    logger.debug("one malloc arena: %s", "set" if done else "refused by the C library")
    return done


def fix_mmap_threshold(nbytes: int = MMAP_THRESHOLD) -> bool:
    """``mallopt(M_MMAP_THRESHOLD, nbytes)`` on glibc: blocks of at least ``nbytes`` are mapped
    apart and unmapped when freed, whatever was freed before (no dynamic threshold).

    Left alone when the user set ``MALLOC_MMAP_THRESHOLD_`` and on a C library without
    ``mallopt``. Returns whether it was set.
    """
    mallopt = _mallopt("MALLOC_MMAP_THRESHOLD_")
    if mallopt is None:
        return False
    done = bool(mallopt(M_MMAP_THRESHOLD, int(nbytes)))
    logger.debug("mmap threshold %d bytes: %s", nbytes, "set" if done else "refused by the C library")
    return done


def tune_allocator() -> dict[str, bool]:
    """The command line's allocator settings: :func:`use_one_malloc_arena` and
    :func:`fix_mmap_threshold`, unless the environment says ``CUTPLANE_MALLOC=glibc`` (glibc's
    own settings, as in a program that imports the library). Returns which were set."""
    if os.environ.get("CUTPLANE_MALLOC", "").strip().lower() == "glibc":
        return {"one_arena": False, "mmap_threshold": False}
    return {"one_arena": use_one_malloc_arena(), "mmap_threshold": fix_mmap_threshold()}
