"""The C allocator of the command line's process: one malloc arena (glibc).

glibc gives every thread that allocates its own arena (up to 8 per core). The oracle's worker
threads allocate the cuts' arrays (megabytes each) in their arenas, the engine's thread keeps
the working set in the main one, and each arena keeps the memory freed in it for its own
thread. With one arena the memory one thread frees is reused by the others
(``docs/results/plain_memory.md`` measures the plain command's peak with both). The command
line sets it for its own process; the library does not touch the allocator of a program that
imports it.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

__all__ = ["use_one_malloc_arena"]

logger = logging.getLogger(__name__)

#: ``M_ARENA_MAX`` of glibc's ``<malloc.h>``.
M_ARENA_MAX = -8


def use_one_malloc_arena() -> bool:
    """``mallopt(M_ARENA_MAX, 1)`` on glibc, before the command starts its threads.

    Left alone when the user set ``MALLOC_ARENA_MAX`` (glibc reads it at start-up) and on a
    C library without ``mallopt`` (musl, macOS, Windows). Returns whether it was set.
    """
    if "MALLOC_ARENA_MAX" in os.environ or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    done = bool(mallopt(M_ARENA_MAX, 1))
    logger.debug("one malloc arena: %s", "set" if done else "refused by the C library")
    return done
