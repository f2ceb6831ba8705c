"""problems.estimator_options: the checkpoint / memory / executor options every estimator shares,
validated the same way by LinearSVM, SequenceTagger and DependencyParser."""
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from cutplane.parallel import SerialExecutor
from problems.linear.svm import LinearSVM
from problems.parsing.parser import DependencyParser
from problems.estimator_options import (CHECKPOINT_DEFAULTS, check_checkpoint_params, make_executor,
                                        uses_engine_options)
from problems.sequence.tagger import SequenceTagger

from .test_dependency_parser import TEMPLATES, make_treebank


def _est(**kw):
    return SimpleNamespace(**{**CHECKPOINT_DEFAULTS, "executor": None, "n_workers": None, **kw})


def test_defaults_are_the_estimators_defaults():
    for cls, args in ((LinearSVM, ()), (SequenceTagger, ("U00:%x[0,0]\n",)), (DependencyParser, ())):
        params = cls(*args).get_params()
        assert {k: params[k] for k in CHECKPOINT_DEFAULTS} == CHECKPOINT_DEFAULTS
        assert check_checkpoint_params(cls(*args)) == CHECKPOINT_DEFAULTS
    assert uses_engine_options(check_checkpoint_params(_est())) == []


@settings(max_examples=40)
@given(path=st.one_of(st.none(), st.just("c.npz"), st.just(Path("d/c.npz"))), every=st.integers(1, 10**6),
       resume=st.booleans(), limit=st.one_of(st.none(), st.integers(1, 2**40)))
def test_valid_values_pass_through_unchanged(path, every, resume, limit):
    est = _est(checkpoint=path, checkpoint_every=every, resume=resume and path is not None, memory_limit=limit)
    out = check_checkpoint_params(est)
    assert out == dict(checkpoint=path, checkpoint_every=every, resume=resume and path is not None,
                       memory_limit=limit)
    changed = {k for k in CHECKPOINT_DEFAULTS if out[k] != CHECKPOINT_DEFAULTS[k]}
    assert set(uses_engine_options(out)) == changed


@pytest.mark.parametrize("kw, field", [
    (dict(checkpoint=3), "checkpoint"), (dict(checkpoint=["a"]), "checkpoint"),
    (dict(resume=True), "resume"), (dict(checkpoint="c.npz", resume="yes"), "resume"),
    (dict(checkpoint_every=0), "checkpoint_every"), (dict(checkpoint_every=2.0), "checkpoint_every"),
    (dict(memory_limit=0), "memory_limit"), (dict(memory_limit=1.5e6), "memory_limit"),
    (dict(memory_limit=True), "memory_limit"),
])
def test_bad_values_name_their_field(kw, field):
    with pytest.raises(InputError) as err:
        check_checkpoint_params(_est(**kw))
    assert err.value.field == field


def test_make_executor():
    assert isinstance(make_executor(_est()), SerialExecutor)
    ex = make_executor(_est(executor="threads", n_workers=2))
    try:
        assert list(ex.map(lambda v: v * v, [1, 2, 3])) == [1, 4, 9]
    finally:
        getattr(ex, "close", lambda: None)()
    for kw, field in ((dict(executor="nope"), "executor"), (dict(executor="threads", n_workers=0), "n_workers"),
                      (dict(scheduler="tcp://127.0.0.1:1"), "scheduler"),
                      (dict(executor="dask", scheduler=8786), "scheduler")):
        with pytest.raises(InputError) as err:
            make_executor(_est(**kw))
        assert err.value.field == field


def _fit_tiny(cls, **kw):
    if cls is LinearSVM:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(20, 3))
        return LinearSVM(**kw).fit(X, np.where(X[:, 0] > 0, 1, -1))
    if cls is SequenceTagger:
        X = [[("a",), ("b",)], [("b",), ("a",)]]
        return SequenceTagger("U00:%x[0,0]\n", **kw).fit(X, [["A", "B"], ["B", "A"]])
    return DependencyParser(TEMPLATES, **kw).fit(make_treebank(3, seed=0))


@pytest.mark.parametrize("cls", [LinearSVM, SequenceTagger, DependencyParser])
@pytest.mark.parametrize("kw, field", [(dict(resume=True), "resume"), (dict(checkpoint=1.0), "checkpoint"),
                                       (dict(memory_limit=-1), "memory_limit")])
def test_every_estimator_refuses_the_same_way(cls, kw, field):
    with pytest.raises(InputError) as err:
        _fit_tiny(cls, **kw)
    assert err.value.field == field


@pytest.mark.parametrize("cls", [SequenceTagger, DependencyParser])
def test_spom_refuses_engine_options_and_runs_without_them(cls, tmp_path):
    for kw, field in ((dict(checkpoint=tmp_path / "c.npz"), "checkpoint"), (dict(memory_limit=10**6), "memory_limit"),
                      (dict(checkpoint_every=5), "checkpoint_every")):
        with pytest.raises(InputError, match="cutting-plane") as err:
            _fit_tiny(cls, solver="spom", epochs=1, eta0=0.1, **kw)
        assert err.value.field == field
    est = _fit_tiny(cls, solver="spom", epochs=1, eta0=0.1)
    assert est.gap_ is None and not (tmp_path / "c.npz").exists()


def test_executors_made_from_a_name_are_closed_after_fit_and_predict(monkeypatch):
    """Executors an estimator builds from a name are closed when fit (and the parser's predict)
    ends, not left to the garbage collector (a reference cycle or a traceback would keep worker
    processes alive); no worker process outlives the call; an executor instance passed by the
    user is left open for reuse."""
    import multiprocessing

    import problems.parsing.parser as dp
    import problems.sequence.tagger as sl
    from cutplane.parallel import ThreadExecutor
    from problems.synthetic import make_tagging_task

    made = []

    def spy(est):
        ex = make_executor(est)
        real_close = ex.close
        ex.closed = 0

        def close():
            ex.closed += 1
            real_close()

        ex.close = close
        made.append(ex)
        return ex

    monkeypatch.setattr(sl, "make_executor", spy)
    monkeypatch.setattr(dp, "make_executor", spy)
    task = make_tagging_task(n_train=20, n_test=5, length=6, n_labels=2, n_informative=1, n_noise=1, seed=3)
    SequenceTagger(task.templates, C=1.0, eps=0.5, max_iter=3, executor="processes", n_workers=2).fit(
        task.X_train, task.y_train)
    assert [ex.closed for ex in made] == [1]
    assert multiprocessing.active_children() == []
    sents = make_treebank(6, seed=4)
    parser = DependencyParser(templates=TEMPLATES, C=1.0, eps=0.5, max_iter=3, executor="processes", n_workers=2)
    parser.fit(sents)
    parser.predict(sents)
    assert [ex.closed for ex in made] == [1, 1, 1]
    assert multiprocessing.active_children() == []
    mine = ThreadExecutor(2)
    mine.close = lambda: made.append("closed the user's executor")
    SequenceTagger(task.templates, C=1.0, eps=0.5, max_iter=3, executor=mine).fit(task.X_train, task.y_train)
    assert "closed the user's executor" not in made
