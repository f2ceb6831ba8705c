"""``problems.cli.allocator``: the command line sets one malloc arena on glibc, and leaves the
allocator alone when the user set ``MALLOC_ARENA_MAX`` or the C library has no ``mallopt``."""

import ctypes
import sys

import pytest

from problems.cli import allocator


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_set_on_glibc(monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    calls = []
    real = ctypes.CDLL(None).mallopt

    class Libc:
        @property
        def mallopt(self):
            def fake(param, value):
                calls.append((param, value))
                return real(param, value)

            return fake

    monkeypatch.setattr(allocator.ctypes, "CDLL", lambda name: Libc())
    assert allocator.use_one_malloc_arena() is True
    assert calls == [(allocator.M_ARENA_MAX, 1)]


def test_the_users_setting_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    monkeypatch.setattr(allocator.ctypes, "CDLL", lambda name: pytest.fail("the allocator was touched"))
    assert allocator.use_one_malloc_arena() is False


def test_no_mallopt_no_change(monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.setattr(allocator.sys, "platform", "linux")

    class NoMallopt:
        pass

    monkeypatch.setattr(allocator.ctypes, "CDLL", lambda name: NoMallopt())
    assert allocator.use_one_malloc_arena() is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_mmap_threshold_set_on_glibc(monkeypatch):
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    calls = []

    class Libc:
        @property
        def mallopt(self):
            def fake(param, value):
                calls.append((param, value))
                return 1

            return fake

    monkeypatch.setattr(allocator.ctypes, "CDLL", lambda name: Libc())
    assert allocator.fix_mmap_threshold() is True
    assert calls == [(allocator.M_MMAP_THRESHOLD, allocator.MMAP_THRESHOLD)]


def test_the_users_mmap_threshold_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")
    monkeypatch.setattr(allocator.ctypes, "CDLL", lambda name: pytest.fail("the allocator was touched"))
    assert allocator.fix_mmap_threshold() is False


_FREED_BLOCK = """
import sys
import numpy as np
from problems.cli.allocator import fix_mmap_threshold

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) * 1024

if sys.argv[1] == "fixed":
    assert fix_mmap_threshold()
a = np.ones(3 << 20)  # 24 MB, mapped apart; freed, glibc's dynamic threshold rises above it
del a
b = np.ones(3 << 20)  # the same size again: from the heap, unless the threshold is fixed
during = rss()
del b
print(during - rss())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_freed_dense_vector_goes_back_to_the_system():
    """In a child process: with glibc's dynamic threshold a 24 MB array freed after another of
    its size stays resident (in the heap); with the threshold fixed it goes back at once."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")}

    def released(arm):
        out = subprocess.run([sys.executable, "-c", _FREED_BLOCK, arm], check=True, env=env, capture_output=True)
        return int(out.stdout)

    assert released("fixed") > 20 << 20
    assert released("dynamic") < 4 << 20  # the behaviour the setting is there for


def test_glibc_own_settings_on_request(monkeypatch):
    monkeypatch.setenv("CUTPLANE_MALLOC", "glibc")
    monkeypatch.setattr(allocator.ctypes, "CDLL", lambda name: pytest.fail("the allocator was touched"))
    assert allocator.tune_allocator() == {"one_arena": False, "mmap_threshold": False}


def test_tuned_by_default(monkeypatch):
    monkeypatch.delenv("CUTPLANE_MALLOC", raising=False)
    monkeypatch.setattr(allocator, "use_one_malloc_arena", lambda: True)
    monkeypatch.setattr(allocator, "fix_mmap_threshold", lambda: True)
    assert allocator.tune_allocator() == {"one_arena": True, "mmap_threshold": True}
