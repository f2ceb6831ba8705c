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
