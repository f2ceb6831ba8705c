"""Checkpoint / resume: interrupted runs resume to the optimum; bad checkpoints are refused."""

import json
import os
import signal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cutplane import minimize
from cutplane.checkpoint import load_checkpoint, save_checkpoint
from cutplane.exceptions import ConvergenceWarning, InputError, ModelFormatError
from cutplane.interrupt import InterruptGuard
from cutplane.regularizers import L2, MixedNorm

from .test_engine import direct_solve, make_oracle

LAM, EPS = 0.01, 1e-6


class _Stop(Exception):
    pass


def interrupt_at(k):
    """A callback raising KeyboardInterrupt (as Ctrl-C would) at iteration k."""

    def callback(info):
        if info.iteration == k:
            raise KeyboardInterrupt

    return callback


def _reg(kind, dim):
    if kind == "mtl":
        return MixedNorm(np.arange(dim) % 3, p=1.0)
    return L2()


def _term(kind, dim):
    import cvxpy as cp

    if kind == "mtl":
        groups = np.arange(dim) % 3
        return lambda w: 0.5 * cp.square(sum(cp.norm(w[groups == j]) for j in range(3)))
    return lambda w: 0.5 * cp.sum_squares(w)


@pytest.mark.parametrize(
    "method,reg_kind,sparse",
    [("bmrm", "l2", False), ("bmrm", "l2", True), ("ls-bmrm", "l2", False), ("bmrm", "mtl", True)],
)
def test_interrupt_then_resume_reaches_the_same_optimum(tmp_path, method, reg_kind, sparse):
    dim, path = 8, tmp_path / "run.ckpt"
    eps = 1e-4 if reg_kind == "mtl" else EPS
    full = minimize(make_oracle("hinge", 1, 80, dim, sparse), _reg(reg_kind, dim), LAM, method=method, eps=eps)
    assert full.status == "converged" and full.n_iter > 6
    first = minimize(
        make_oracle("hinge", 1, 80, dim, sparse),
        _reg(reg_kind, dim),
        LAM,
        method=method,
        eps=eps,
        checkpoint=path,
        checkpoint_every=2,
        callback=interrupt_at(5),
    )
    assert first.status == "interrupted" and first.n_iter == 5 and path.exists()
    oracle = make_oracle("hinge", 1, 80, dim, sparse)
    resumed = minimize(oracle, _reg(reg_kind, dim), LAM, method=method, eps=eps, checkpoint=path, resume=True)
    assert resumed.status == "converged"
    assert abs(resumed.objective - full.objective) <= eps
    # the history of the first five iterations is carried over exactly
    np.testing.assert_array_equal(resumed.history.upper[:5], first.history.upper)
    np.testing.assert_array_equal(resumed.history.lower[:5], first.history.lower)
    if method == "bmrm":  # one oracle call per iteration, none repeated
        assert resumed.n_iter == 5 + len(oracle.calls)
    ref = direct_solve(oracle, _term(reg_kind, dim), LAM)
    assert ref - 1e-6 <= resumed.objective <= ref + eps + 1e-6
    assert np.all(np.diff(resumed.history.lower) >= -1e-12) and np.all(resumed.history.gap >= 0)


def test_resumed_bmrm_follows_the_uninterrupted_iterates(tmp_path):
    """BMRM is deterministic: resuming replays the same query points (to solver round-off)."""
    path = tmp_path / "c.npz"
    full_oracle = make_oracle("hinge", 4, 60, 6, False)
    full = minimize(full_oracle, L2(), LAM, eps=EPS)
    minimize(
        make_oracle("hinge", 4, 60, 6, False),
        L2(),
        LAM,
        eps=EPS,
        checkpoint=path,
        checkpoint_every=1,
        callback=interrupt_at(4),
    )
    oracle = make_oracle("hinge", 4, 60, 6, False)
    resumed = minimize(oracle, L2(), LAM, eps=EPS, checkpoint=path, resume=True)
    assert len(oracle.calls) == resumed.n_iter - 4
    n = min(len(oracle.calls), 3)
    np.testing.assert_allclose(np.array(oracle.calls[:n]), np.array(full_oracle.calls[4 : 4 + n]), atol=1e-6)
    check = make_oracle("hinge", 4, 60, 6, False)
    assert resumed.objective == pytest.approx(LAM * L2()(resumed.w) + check.value(resumed.w), abs=1e-12)
    assert resumed.status == full.status == "converged" and abs(resumed.objective - full.objective) <= EPS


class _InterruptingSolver:
    """The registry's reduced solver of ``regularizer``, raising KeyboardInterrupt on its k-th
    solve (an interrupt mid-solve)."""

    def __init__(self, regularizer, raise_at=None):
        from cutplane.reduced.registry import make_reduced_solver

        self.inner, self.raise_at, self.count = make_reduced_solver(regularizer), raise_at, 0

    def solve(self, ws, lam, warm_start=None):
        self.count += 1
        if self.count == self.raise_at:
            raise KeyboardInterrupt
        return self.inner.solve(ws, lam, warm_start=warm_start)


def test_interrupt_during_the_reduced_solve_keeps_the_evaluated_cut(tmp_path):
    path = tmp_path / "c.npz"
    reg = L2()
    oracle = make_oracle("hinge", 2, 50, 5, True)
    first = minimize(oracle, reg, LAM, eps=EPS, checkpoint=path, solver=_InterruptingSolver(reg, 3))
    assert first.status == "interrupted" and first.n_iter == 2 and len(oracle.calls) == 3
    state = load_checkpoint(path, dim=5, fingerprint=_fp(oracle, reg), groups=None)
    assert state.pending is not None and state.n_iter == 3
    oracle2 = make_oracle("hinge", 2, 50, 5, True)
    reg2 = L2()
    resumed = minimize(oracle2, reg2, LAM, eps=EPS, checkpoint=path, resume=True, solver=_InterruptingSolver(reg2))
    assert resumed.status == "converged"
    # the third query point is not evaluated again: the resumed run starts with its solve
    assert resumed.n_iter == 3 + len(oracle2.calls)
    full = minimize(make_oracle("hinge", 2, 50, 5, True), L2(), LAM, eps=EPS)
    assert abs(resumed.objective - full.objective) <= EPS


def _fp(oracle, reg, method="bmrm", lam=LAM, options=None):
    from cutplane.fingerprint import fingerprint

    return fingerprint(oracle, reg, lam, method, options or {})


class InterruptingOracle:
    """Raises KeyboardInterrupt on its k-th call (private counters: not part of the fingerprint)."""

    def __init__(self, inner, k):
        self.A, self.b, self.dim = inner.A, inner.b, inner.dim
        self._inner, self._k, self._count = inner, k, 0

    def __call__(self, w):
        self._count += 1
        if self._count == self._k:
            raise KeyboardInterrupt
        return self._inner(w)


def test_interrupt_in_the_oracle_and_in_the_line_search(tmp_path):
    """KeyboardInterrupt from the oracle: at an iteration's query point, and inside LS-BMRM's
    generic line search (which calls the oracle too)."""
    full = minimize(make_oracle("maxaffine", 3, 30, 5, False), L2(), LAM, method="ls-bmrm", eps=EPS)
    phases = set()
    for k in range(1, 14):
        path = tmp_path / f"c{k}.npz"
        inner = make_oracle("maxaffine", 3, 30, 5, False)
        first = minimize(InterruptingOracle(inner, k), L2(), LAM, method="ls-bmrm", eps=EPS, checkpoint=path)
        assert first.status == "interrupted"
        # at a query point all k - 1 calls made belong to finished iterations; inside a line search
        # the calls of the unfinished search are not counted
        phases.add("query" if first.n_oracle_calls == k - 1 else "search")
        resumed = minimize(
            InterruptingOracle(inner, 0), L2(), LAM, method="ls-bmrm", eps=EPS, checkpoint=path, resume=True
        )
        assert resumed.status == "converged" and resumed.n_iter >= first.n_iter
        assert abs(resumed.objective - full.objective) <= EPS
    assert phases == {"search", "query"}


def test_sigterm_saves_and_returns_interrupted(tmp_path):
    path = tmp_path / "c.npz"
    before = signal.getsignal(signal.SIGTERM)

    def callback(info):
        if info.iteration == 3:
            os.kill(os.getpid(), signal.SIGTERM)

    res = minimize(make_oracle("hinge", 5, 60, 6, False), L2(), LAM, eps=EPS, checkpoint=path, callback=callback)
    assert res.status == "interrupted" and res.n_iter == 3 and path.exists()
    assert signal.getsignal(signal.SIGTERM) is before
    resumed = minimize(make_oracle("hinge", 5, 60, 6, False), L2(), LAM, eps=EPS, checkpoint=path, resume=True)
    full = minimize(make_oracle("hinge", 5, 60, 6, False), L2(), LAM, eps=EPS)
    assert resumed.status == "converged" and abs(resumed.objective - full.objective) <= EPS


class _SignalInsideALibrary:
    """An oracle whose third call receives SIGTERM inside "library code" that swallows the
    ``KeyboardInterrupt`` (``mode="swallow"``) or hands it back as a ``SystemError`` caused by it,
    as numba's dispatcher does when the signal lands in one of its callbacks (``mode="wrap"``)."""

    def __init__(self, oracle, mode):
        self.oracle, self.mode, self.calls = oracle, mode, 0
        self.dim = oracle.dim

    def __call__(self, w):
        self.calls += 1
        if self.calls == 3:
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            except KeyboardInterrupt as exc:
                if self.mode == "wrap":
                    raise SystemError("<function _numba_unpickle> returned a result with an exception set") from exc
        return self.oracle(w)


@pytest.mark.parametrize("mode", ["swallow", "wrap"])
def test_a_signal_a_library_swallows_or_wraps_still_interrupts(tmp_path, mode):
    """Seen under CI: SIGTERM during a kernel's first compilation came back as a SystemError (exit 1
    instead of 130). Swallowed, it ends the run at the next iteration boundary; wrapped, at once."""
    path = tmp_path / "c.npz"
    oracle = _SignalInsideALibrary(make_oracle("hinge", 5, 60, 6, False), mode)
    res = minimize(oracle, L2(), LAM, eps=EPS, checkpoint=path)
    assert res.status == "interrupted" and path.exists()
    assert res.n_iter == (3 if mode == "swallow" else 2)
    assert res.lower_bound <= res.objective  # the best point so far, with its certificate


def test_a_system_error_without_a_signal_is_not_an_interrupt(tmp_path):
    class Broken:
        def __init__(self, oracle):
            self.oracle, self.dim, self.calls = oracle, oracle.dim, 0

        def __call__(self, w):
            self.calls += 1
            if self.calls == 2:
                raise SystemError("a real one")
            return self.oracle(w)

    with pytest.raises(SystemError, match="a real one"):
        minimize(Broken(make_oracle("hinge", 5, 60, 6, False)), L2(), LAM, eps=EPS, checkpoint=tmp_path / "c.npz")


def test_guard_defers_a_signal_to_the_end_of_a_critical_section():
    done = []
    with InterruptGuard() as guard:
        with pytest.raises(KeyboardInterrupt):
            with guard.critical():
                os.kill(os.getpid(), signal.SIGTERM)
                done.append("after the signal")
    assert done == ["after the signal"] and guard.signal_received == signal.SIGTERM


def test_max_iter_then_resume_with_a_larger_budget(tmp_path):
    path = tmp_path / "c.npz"
    with pytest.warns(ConvergenceWarning):
        short = minimize(
            make_oracle("hinge", 6, 60, 6, True), L2(), LAM, eps=EPS, max_iter=4, checkpoint=path, checkpoint_every=100
        )
    assert short.status == "max_iter" and path.exists()  # saved on stopping, not only every 100
    more = minimize(
        make_oracle("hinge", 6, 60, 6, True), L2(), LAM, eps=EPS, max_iter=1000, checkpoint=path, resume=True
    )
    full = minimize(make_oracle("hinge", 6, 60, 6, True), L2(), LAM, eps=EPS)
    assert more.status == "converged" and abs(more.objective - full.objective) <= EPS


def test_resume_without_a_file_starts_fresh_and_needs_a_path(tmp_path):
    res = minimize(
        make_oracle("hinge", 0, 30, 4, False), L2(), LAM, eps=1e-4, checkpoint=tmp_path / "new.npz", resume=True
    )
    assert res.status == "converged"
    with pytest.raises(InputError, match="resume"):
        minimize(make_oracle("hinge", 0, 30, 4, False), L2(), LAM, resume=True)
    with pytest.raises(InputError, match="folder"):
        minimize(make_oracle("hinge", 0, 30, 4, False), L2(), LAM, checkpoint=tmp_path / "no" / "c.npz")


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "c.npz"
    oracle = make_oracle("hinge", 7, 40, 5, True)
    minimize(oracle, L2(), LAM, eps=EPS, checkpoint=path, callback=interrupt_at(4))
    return path, oracle


def test_mismatched_problem_is_refused(saved):
    path, oracle = saved
    with pytest.raises(ModelFormatError, match="different problem"):
        minimize(oracle, L2(), 2 * LAM, eps=EPS, checkpoint=path, resume=True)
    with pytest.raises(ModelFormatError, match="different problem"):
        minimize(make_oracle("hinge", 8, 40, 5, True), L2(), LAM, eps=EPS, checkpoint=path, resume=True)
    with pytest.raises(ModelFormatError, match="different problem"):
        minimize(oracle, L2(), LAM, eps=EPS, method="ls-bmrm", checkpoint=path, resume=True)
    with pytest.raises(ModelFormatError, match="dim"):
        load_checkpoint(path, dim=6, fingerprint=_fp(oracle, L2()))


def test_truncated_and_corrupted_files_are_refused(saved):
    path, oracle = saved
    data = path.read_bytes()
    for bad in (data[: len(data) // 2], data[:10], b"", b"garbage" * 10):
        path.write_bytes(bad)
        with pytest.raises(ModelFormatError, match="truncated or corrupted"):
            minimize(oracle, L2(), LAM, eps=EPS, checkpoint=path, resume=True)


def test_wrong_version_and_checksum_are_refused(saved, tmp_path):
    path, oracle = saved
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays.pop("__meta__")))
    for change, match in (
        ({"format_version": 99}, "format_version"),
        ({"n_calls": 1234}, "checksum"),
        ({"format": "other"}, "not a cutplane checkpoint"),
    ):
        bad = tmp_path / "bad.npz"
        np.savez(bad, **arrays, __meta__=np.array(json.dumps({**meta, **change})))
        with pytest.raises(ModelFormatError, match=match):
            load_checkpoint(bad, dim=5, fingerprint=_fp(oracle, L2()))
    arrays["w"] = arrays["w"] + 1.0  # a consistent zip whose payload changed
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays, __meta__=np.array(json.dumps(meta)))
    with pytest.raises(ModelFormatError, match="checksum"):
        load_checkpoint(bad, dim=5, fingerprint=_fp(oracle, L2()))
    np.savez(bad, **arrays, __meta__=np.array([{"a": 1}], dtype=object))  # pickle is never used
    with pytest.raises(ModelFormatError):
        load_checkpoint(bad, dim=5, fingerprint=_fp(oracle, L2()))


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])  # `saved` is only read
@given(position=st.floats(0.0, 1.0, exclude_max=True), bit=st.integers(0, 7))
def test_any_flipped_bit_is_refused_or_harmless(saved, position, bit):
    """A flipped bit anywhere either raises ModelFormatError or leaves the state identical
    (zip header fields such as timestamps are not part of the payload)."""
    path, oracle = saved
    good = load_checkpoint(path, dim=5, fingerprint=_fp(oracle, L2()))
    data = bytearray(path.read_bytes())
    i = int(position * len(data))
    data[i] ^= 1 << bit
    bad = path.with_name("flipped.npz")
    bad.write_bytes(bytes(data))
    try:
        state = load_checkpoint(bad, dim=5, fingerprint=_fp(oracle, L2()))
    except ModelFormatError:
        return
    np.testing.assert_array_equal(state.w, good.w)
    np.testing.assert_array_equal(state.working_set.matrix().toarray(), good.working_set.matrix().toarray())
    assert state.rows == good.rows or np.array_equal(np.array(state.rows), np.array(good.rows), equal_nan=True)


def test_round_trip_restores_cuts_duals_idle_counts(saved, tmp_path):
    path, oracle = saved
    state = load_checkpoint(path, dim=5, fingerprint=_fp(oracle, L2()))
    again = tmp_path / "again.npz"
    save_checkpoint(again, state, fingerprint=_fp(oracle, L2()), method="bmrm")
    state2 = load_checkpoint(again, dim=5, fingerprint=_fp(oracle, L2()))
    ws, ws2 = state.working_set, state2.working_set
    assert ws.n_cuts == ws2.n_cuts > 0 and ws.sparse and ws2.sparse
    np.testing.assert_array_equal(ws.duals, ws2.duals)
    np.testing.assert_array_equal(ws.idle_counts, ws2.idle_counts)
    np.testing.assert_array_equal(ws.offsets, ws2.offsets)
    np.testing.assert_allclose(ws.gram(), ws2.gram(), rtol=1e-12)
    assert not list(tmp_path.glob("*.tmp"))  # the atomic write left no temporary file


def test_every_bit_of_the_zip_directory_is_checked(saved, tmp_path):
    """The zip's central directory (the file's tail) parses in zipfile; a flip there once raised
    NotImplementedError ("zip file version") instead of ModelFormatError."""
    path, oracle = saved
    good = load_checkpoint(path, dim=5, fingerprint=_fp(oracle, L2()))
    data = path.read_bytes()
    bad, refused = tmp_path / "flipped.npz", 0
    for i in range(len(data) - 160, len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 1 << (i % 8)
        bad.write_bytes(bytes(flipped))
        try:
            state = load_checkpoint(bad, dim=5, fingerprint=_fp(oracle, L2()))
        except ModelFormatError:
            refused += 1
            continue
        np.testing.assert_array_equal(state.w, good.w)
        np.testing.assert_array_equal(state.working_set.offsets, good.working_set.offsets)
    assert refused > 80


def _check_clocks(hist, time_s=None):
    """The history's wall and CPU columns: finite, non-negative, non-decreasing."""
    for col in (hist.wall_time, hist.cpu_time):
        assert col.shape == hist.upper.shape and np.all(np.isfinite(col)) and np.all(col >= 0)
        assert np.all(np.diff(col) >= 0)
    if time_s is not None:
        assert hist.wall_time[-1] <= time_s + 1e-9


@pytest.mark.parametrize("method", ["bmrm", "ls-bmrm"])
def test_history_keeps_wall_and_cpu_seconds(method):
    res = minimize(make_oracle("hinge", 3, 60, 6, False), L2(), LAM, eps=EPS, method=method)
    assert res.n_iter > 3
    _check_clocks(res.history, res.time_s)


def test_resumed_history_counts_seconds_on(tmp_path):
    """After an interrupt and a resume the clocks go on from the saved rows, never back."""
    path = tmp_path / "c.npz"
    first = minimize(
        make_oracle("hinge", 4, 60, 6, False),
        L2(),
        LAM,
        eps=EPS,
        checkpoint=path,
        checkpoint_every=1,
        callback=interrupt_at(4),
    )
    resumed = minimize(make_oracle("hinge", 4, 60, 6, False), L2(), LAM, eps=EPS, checkpoint=path, resume=True)
    k = first.n_iter
    assert resumed.n_iter > k
    np.testing.assert_array_equal(resumed.history.wall_time[:k], first.history.wall_time)
    np.testing.assert_array_equal(resumed.history.cpu_time[:k], first.history.cpu_time)
    _check_clocks(resumed.history)


@pytest.mark.parametrize("old_columns", [10, 12])
def test_checkpoint_without_the_newer_columns_loads(tmp_path, monkeypatch, old_columns):
    """A checkpoint written before the history kept wall / CPU seconds (10 columns) or the bytes
    sent (12 columns) resumes; its rows get NaN in the missing columns and the new rows count
    the clocks from zero and have every column."""
    import cutplane.checkpoint as ckpt

    path = tmp_path / "old.npz"
    oracle = make_oracle("hinge", 5, 60, 6, False)
    with pytest.warns(ConvergenceWarning):
        minimize(oracle, L2(), LAM, eps=EPS, max_iter=3, checkpoint=path)
    state = load_checkpoint(path, dim=oracle.dim, fingerprint=_fp(oracle, L2()))
    state.rows = [row[:old_columns] for row in state.rows]
    monkeypatch.setattr(ckpt, "_HISTORY_COLUMNS", old_columns)
    save_checkpoint(path, state, fingerprint=_fp(oracle, L2()), method="bmrm")
    monkeypatch.undo()
    back = load_checkpoint(path, dim=oracle.dim, fingerprint=_fp(oracle, L2()))
    assert all(len(r) == ckpt._HISTORY_COLUMNS and all(np.isnan(x) for x in r[old_columns:]) for r in back.rows)
    more = minimize(make_oracle("hinge", 5, 60, 6, False), L2(), LAM, eps=EPS, checkpoint=path, resume=True)
    assert more.status == "converged" and np.all(np.isnan(more.history.bytes_sent[:3]))
    assert np.all(np.isnan(more.history.wall_time[:3]) == (old_columns == 10))
    assert np.all(np.isfinite(more.history.cpu_time[3:])) and np.all(np.diff(more.history.cpu_time[3:]) >= 0)


def test_an_executor_failure_saves_the_boundary_it_happened_at(tmp_path):
    """Workers lost during an oracle call (an ExecutorError) end the run with that error, but
    the checkpoint is of the boundary the call started from, not of the last multiple of
    ``checkpoint_every``: resuming loses no iteration and reaches the uninterrupted optimum."""
    from cutplane.executors import ExecutorError

    class Failing:
        def __init__(self, inner, fail_at):  # private: not part of the problem's fingerprint
            self.inner, self._fail_at, self._calls = inner, fail_at, 0
            self.dim = inner.dim

        def __call__(self, w):
            self._calls += 1
            if self._calls == self._fail_at:
                raise ExecutorError("a Dask worker was lost mid-run")
            return self.inner(w)

    path = tmp_path / "ckpt.npz"
    ref = minimize(make_oracle("hinge", 7, 80, 8, False), L2(), LAM, eps=EPS)
    assert ref.n_iter > 8
    failing = Failing(make_oracle("hinge", 7, 80, 8, False), fail_at=8)
    with pytest.raises(ExecutorError, match="lost"):
        minimize(failing, L2(), LAM, eps=EPS, checkpoint=path, checkpoint_every=5)
    state = load_checkpoint(path, dim=failing.dim, fingerprint=_fp(failing, L2()))
    assert len(state.rows) == 7  # the seven iterations before the failed call, not five
    healthy = Failing(make_oracle("hinge", 7, 80, 8, False), fail_at=0)  # the same problem, workers back
    more = minimize(healthy, L2(), LAM, eps=EPS, checkpoint=path, resume=True)
    assert more.status == "converged" and more.n_iter == ref.n_iter
    assert abs(more.objective - ref.objective) <= EPS
