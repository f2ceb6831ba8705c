"""problems.solvers: the solver objects the estimators take (CuttingPlane, SPOM), their
declarative checks, their nesting in get_params / set_params / clone / GridSearchCV, the
executors they name, and model files of the format before solver objects."""

import inspect
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from cutplane.exceptions import InputError, ModelFormatError
from cutplane.executors import SerialExecutor
from problems.linear.svm import LinearSVM
from problems.parsing.parser import DependencyParser, TreeDecoder
from problems.sequence.tagger import SequenceTagger
from problems.solvers import (
    SPOM,
    CuttingPlane,
    SPOMOptions,
    checked_solver,
    make_executor,
    solver_from_legacy_params,
    solver_from_meta,
    solver_to_meta,
)

from .test_dependency_parser import TEMPLATES, make_treebank

ESTIMATORS = [(LinearSVM, ()), (SequenceTagger, ("U00:%x[0,0]\n",)), (DependencyParser, ())]


def _fit_tiny(cls, **kw):
    if cls is LinearSVM:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(20, 3))
        return LinearSVM(**kw).fit(X, np.where(X[:, 0] > 0, 1, -1))
    if cls is SequenceTagger:
        X = [[("a",), ("b",)], [("b",), ("a",)]]
        return SequenceTagger("U00:%x[0,0]\n", **kw).fit(X, [["A", "B"], ["B", "A"]])
    return DependencyParser(TEMPLATES, **kw).fit(make_treebank(3, seed=0))


# ------------------------------------------------------------------------ the objects
@pytest.mark.parametrize("cls, args", ESTIMATORS)
def test_constructors_take_at_most_ten_parameters(cls, args):
    assert len(inspect.signature(cls).parameters) <= 10
    assert cls(*args).get_params()["solver"] is None


def test_defaults_are_the_estimators_defaults():
    structured = checked_solver(None, eps=0.1, max_iter=500)
    assert (structured.eps, structured.max_iter, structured.method) == (0.1, 500, "bmrm")
    assert (structured.checkpoint, structured.checkpoint_every, structured.resume, structured.memory_limit) == (
        None,
        10,
        False,
        None,
    )
    assert checked_solver(CuttingPlane(eps=0.5), eps=0.1, max_iter=500).eps == 0.5
    assert isinstance(checked_solver(SPOM(), eps=0.1, max_iter=500), SPOMOptions)


@settings(max_examples=40)
@given(
    path=st.one_of(st.none(), st.just("c.npz"), st.just(Path("d/c.npz"))),
    every=st.integers(1, 10**6),
    resume=st.booleans(),
    limit=st.one_of(st.none(), st.integers(1, 2**40)),
)
def test_valid_values_pass_through_unchanged(path, every, resume, limit):
    solver = CuttingPlane(
        checkpoint=path, checkpoint_every=every, resume=resume and path is not None, memory_limit=limit
    )
    out = solver.checked(eps=0.1, max_iter=5)
    assert (out.checkpoint, out.checkpoint_every, out.resume, out.memory_limit) == (
        path,
        every,
        resume and path is not None,
        limit,
    )


@pytest.mark.parametrize(
    "kw, field",
    [
        (dict(checkpoint=3), "checkpoint"),
        (dict(checkpoint=["a"]), "checkpoint"),
        (dict(resume=True), "resume"),
        (dict(checkpoint="c.npz", resume="yes"), "resume"),
        (dict(checkpoint_every=0), "checkpoint_every"),
        (dict(checkpoint_every=2.0), "checkpoint_every"),
        (dict(memory_limit=0), "memory_limit"),
        (dict(memory_limit=1.5e6), "memory_limit"),
        (dict(memory_limit=True), "memory_limit"),
        (dict(eps=0.0), "eps"),
        (dict(max_iter=0), "max_iter"),
        (dict(method="newton"), "method"),
        (dict(max_cuts=1), "max_cuts"),
        (dict(time_limit=-1.0), "time_limit"),
        (dict(executor="nope"), "executor"),
        (dict(n_workers=0), "n_workers"),
        (dict(scheduler="tcp://127.0.0.1:1"), "scheduler"),
        (dict(executor="dask", scheduler=8786), "scheduler"),
        (dict(risk_floor_cut=1), "risk_floor_cut"),
        (dict(backend=3), "backend"),
    ],
)
def test_bad_cutting_plane_options_name_their_field(kw, field):
    with pytest.raises(InputError) as err:
        CuttingPlane(**kw).checked(eps=0.1, max_iter=5)
    assert err.value.field == field


@pytest.mark.parametrize(
    "kw, field",
    [
        (dict(epochs=0), "epochs"),
        (dict(eta0=0.0), "eta0"),
        (dict(averaged="yes"), "averaged"),
        (dict(seed=-1), "seed"),
        (dict(time_limit=0.0), "time_limit"),
        (dict(scheduler="tcp://x:1"), "scheduler"),
    ],
)
def test_bad_spom_options_name_their_field(kw, field):
    with pytest.raises(InputError) as err:
        SPOM(**kw).checked()
    assert err.value.field == field


def test_solver_only_options_belong_to_their_solver():
    """The engine's options are not SPOM's (and the other way round): a wrong one is a
    TypeError at construction, not a refusal at run time."""
    for name in ("checkpoint", "memory_limit", "risk_floor_cut", "max_cuts", "backend"):
        with pytest.raises(TypeError):
            SPOM(**{name: None})
    for name in ("epochs", "eta0", "averaged"):  # seed is both: SPOM's epoch orders, n-slack's passes
        with pytest.raises(TypeError):
            CuttingPlane(**{name: None})


def test_make_executor():
    assert isinstance(make_executor(CuttingPlane().checked(eps=0.1, max_iter=5)), SerialExecutor)
    ex = make_executor(CuttingPlane(executor="threads", n_workers=2).checked(eps=0.1, max_iter=5))
    try:
        assert list(ex.map(lambda v: v * v, [1, 2, 3])) == [1, 4, 9]
    finally:
        ex.close()


# ------------------------------------------------------------------ estimator contract
@pytest.mark.parametrize("cls, args", ESTIMATORS)
def test_solver_options_are_nested_parameters(cls, args):
    est = cls(*args, solver=CuttingPlane(eps=0.05))
    params = est.get_params()
    assert params["solver__eps"] == 0.05 and params["solver__time_limit"] is None
    est.set_params(solver__time_limit=60.0, solver__max_iter=7)
    assert est.solver.time_limit == 60.0 and est.solver.max_iter == 7
    twin = clone(est)
    assert twin.solver is not est.solver and twin.solver == est.solver
    assert twin.get_params() == est.get_params()
    online = cls(*args, solver=SPOM(epochs=3)).set_params(solver__seed=4)
    assert online.get_params()["solver__seed"] == 4 and clone(online).solver == SPOM(epochs=3, seed=4)


def test_decoder_options_are_nested_parameters():
    est = DependencyParser(decoder=TreeDecoder()).set_params(decoder__projective=True)
    assert est.get_params()["decoder__projective"] is True and clone(est).decoder == TreeDecoder(projective=True)


@pytest.mark.parametrize("cls", [LinearSVM, SequenceTagger, DependencyParser])
@pytest.mark.parametrize(
    "kw, field",
    [(dict(resume=True), "resume"), (dict(checkpoint=1.0), "checkpoint"), (dict(memory_limit=-1), "memory_limit")],
)
def test_every_estimator_refuses_the_same_way(cls, kw, field):
    with pytest.raises(InputError) as err:
        _fit_tiny(cls, solver=CuttingPlane(**kw))
    assert err.value.field == field


@pytest.mark.parametrize("cls", [LinearSVM, SequenceTagger, DependencyParser])
def test_a_solver_name_is_refused_with_the_new_form(cls):
    with pytest.raises(InputError, match=r"solver=SPOM\(\.\.\.\)") as err:
        _fit_tiny(cls, solver="spom")
    assert err.value.field == "solver"


@pytest.mark.parametrize("cls", [SequenceTagger, DependencyParser])
def test_spom_runs_without_a_certificate(cls, tmp_path):
    est = _fit_tiny(cls, solver=SPOM(epochs=1, eta0=0.1))
    assert est.gap_ is None and est.lower_bound_ is None and est.n_iter_ == 1
    assert est.objective_ is not None and isinstance(est.solver_options_, SPOMOptions)


@pytest.mark.parametrize("cls, args", ESTIMATORS)
def test_not_fitted_is_sklearns_error(cls, args, tmp_path):
    est = cls(*args)
    X = np.ones((2, 3)) if cls is LinearSVM else ([[("a",)]] if cls is SequenceTagger else make_treebank(1, seed=0))
    with pytest.raises(NotFittedError):
        est.predict(X)
    with pytest.raises(NotFittedError):
        est.save(tmp_path / "m.npz")


# max_iter=5: the search over solver__eps is the point
@pytest.mark.filterwarnings("ignore::cutplane.exceptions.ConvergenceWarning")
def test_grid_search_over_a_solver_option_of_the_parser():
    from sklearn.model_selection import GridSearchCV

    grid = GridSearchCV(DependencyParser(TEMPLATES, solver=CuttingPlane(max_iter=5)), {"solver__eps": [0.5, 0.1]}, cv=2)
    grid.fit(make_treebank(8, seed=2))
    assert grid.best_estimator_.solver.eps == grid.best_params_["solver__eps"]


def test_executors_made_from_a_name_are_closed_after_fit_and_predict(monkeypatch):
    """Executors an estimator builds from a name are closed when fit (and the parser's predict)
    ends, not left to the garbage collector (a reference cycle or a traceback would keep worker
    processes alive); no worker process outlives the call; an executor instance passed by the
    user is left open for reuse."""
    import multiprocessing

    import problems.parsing.parser as dp
    import problems.sequence.tagger as sl
    from cutplane.executors import ThreadExecutor
    from problems.synthetic import make_tagging_task

    made = []

    def spy(options):
        ex = make_executor(options)
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
    solver = CuttingPlane(eps=0.5, max_iter=3, executor="processes", n_workers=2)
    SequenceTagger(task.templates, C=1.0, solver=solver).fit(task.X_train, task.y_train)
    assert [ex.closed for ex in made] == [1]
    assert multiprocessing.active_children() == []
    sents = make_treebank(6, seed=4)
    parser = DependencyParser(templates=TEMPLATES, C=1.0, solver=solver)
    parser.fit(sents)
    parser.predict(sents)
    assert [ex.closed for ex in made] == [1, 1, 1]
    assert multiprocessing.active_children() == []
    mine = ThreadExecutor(2)
    mine.close = lambda: made.append("closed the user's executor")
    SequenceTagger(task.templates, C=1.0, solver=CuttingPlane(eps=0.5, max_iter=3, executor=mine)).fit(
        task.X_train, task.y_train
    )
    assert "closed the user's executor" not in made


# ------------------------------------------------------------------------ model files
def test_solver_json_round_trip():
    for solver in (CuttingPlane(eps=0.01, checkpoint=Path("c.npz"), executor="threads"), SPOM(epochs=3, seed=2)):
        meta = solver_to_meta(solver)
        json.dumps(meta)
        back = solver_from_meta(meta)
        assert type(back) is type(solver) and back.executor is None  # how it ran is not stored
    assert solver_to_meta(None) is None and solver_from_meta(None) is None
    for bad in ({"name": "Newton", "params": {}}, {"name": "SPOM", "params": {"eps": 1}}, ["SPOM"]):
        with pytest.raises(InputError):
            solver_from_meta(bad)


def test_legacy_keywords_map_to_a_solver():
    rest, solver = solver_from_legacy_params(
        dict(
            C=2.0,
            eps=0.05,
            max_iter=9,
            solver="cutting-plane",
            epochs=20,
            checkpoint="c.npz",
            executor="threads",
            backend=None,
        )
    )
    assert rest == {"C": 2.0} and solver == CuttingPlane(eps=0.05, max_iter=9, checkpoint="c.npz")
    rest, solver = solver_from_legacy_params(dict(C=1.0, solver="spom", epochs=4, seed=3, eps=0.1, prune_after=50))
    assert solver == SPOM(epochs=4, seed=3)
    _, solver = solver_from_legacy_params(dict(solver="CLARABEL", method="ls-bmrm"))  # solver was the backend
    assert solver == CuttingPlane(backend="CLARABEL", method="ls-bmrm")


def _to_format_1(path, out, params):
    """Rewrite a model file as format version 1: the solver's options as keywords of the estimator."""
    with zipfile.ZipFile(path) as zf:
        members = {info.filename: zf.read(info) for info in zf.infolist()}
    data = np.load(path, allow_pickle=False)
    meta = json.loads(str(data["__meta__"]))
    meta["format_version"] = 1
    meta["params"] = params
    arrays = {k: data[k] for k in data.files if k != "__meta__"}
    np.savez_compressed(out, **arrays, __meta__=np.array(json.dumps(meta, sort_keys=True)))
    assert set(members) == set(zipfile.ZipFile(out).namelist())
    return out


def test_format_1_models_load(tmp_path):
    """Files written before solver objects (format_version 1) load, their options mapped into
    the solver (and, for the parser, the decoder)."""
    svm = _fit_tiny(LinearSVM, C=2.0, solver=CuttingPlane(eps=1e-2))
    old = _to_format_1(
        svm.save(tmp_path / "svm.npz"),
        tmp_path / "svm1.npz",
        {
            "C": 2.0,
            "regularizer": "l2",
            "method": "bmrm",
            "eps": 0.01,
            "max_iter": 1000,
            "time_limit": None,
            "max_cuts": None,
            "bias": None,
            "solver": None,
            "checkpoint": None,
            "checkpoint_every": 10,
            "resume": False,
            "memory_limit": None,
            "verbose": False,
        },
    )
    back = LinearSVM.load(old)
    assert back.C == 2.0 and back.solver == CuttingPlane(method="bmrm", eps=0.01, max_iter=1000)
    np.testing.assert_array_equal(back.coef_, svm.coef_)

    tagger = _fit_tiny(SequenceTagger, C=1.0, solver=SPOM(epochs=1, eta0=0.1))
    old = _to_format_1(
        tagger.save(tmp_path / "t.npz"),
        tmp_path / "t1.npz",
        {
            "C": 1.0,
            "regularizer": "mtl",
            "p": 1.0,
            "eps": 0.1,
            "max_iter": 500,
            "time_limit": None,
            "min_count": 1,
            "max_cuts": None,
            "prune_after": 50,
            "n_workers": None,
            "solver": "spom",
            "backend": None,
            "epochs": 1,
            "eta0": 0.1,
            "averaged": True,
            "seed": 0,
            "active_rtol": 1e-5,
            "checkpoint": None,
            "checkpoint_every": 10,
            "resume": False,
            "memory_limit": None,
            "risk_floor_cut": False,
            "verbose": False,
        },
    )
    back = SequenceTagger.load(old)
    assert back.solver == SPOM(epochs=1, eta0=0.1, averaged=True, seed=0, time_limit=None, verbose=False)
    assert back.predict([[("a",), ("b",)]]) == tagger.predict([[("a",), ("b",)]])

    parser = _fit_tiny(DependencyParser, C=1.0, solver=CuttingPlane(eps=0.5, max_iter=5))
    old = _to_format_1(
        parser.save(tmp_path / "p.npz"),
        tmp_path / "p1.npz",
        {
            "C": 1.0,
            "regularizer": "mtl",
            "p": 1.0,
            "projective": True,
            "single_root": True,
            "eps": 0.5,
            "max_iter": 5,
            "min_count": 1,
            "normalize_loss": False,
            "pos": "upos",
            "solver": "CLARABEL",
            "active_rtol": 1e-5,
        },
    )
    back = DependencyParser.load(old)
    assert back.decoder == TreeDecoder(projective=True, single_root=True)
    assert back.solver == CuttingPlane(eps=0.5, max_iter=5, backend="CLARABEL")


def test_bad_solver_entry_names_the_format_version(tmp_path):
    svm = _fit_tiny(LinearSVM, solver=CuttingPlane(eps=1e-2))
    path = svm.save(tmp_path / "svm.npz")
    data = np.load(path, allow_pickle=False)
    meta = json.loads(str(data["__meta__"]))
    assert meta["format_version"] == 2 and meta["params"]["solver"]["name"] == "CuttingPlane"
    meta["params"]["solver"] = {"name": "Newton", "params": {}}
    arrays = {k: data[k] for k in data.files if k != "__meta__"}
    np.savez_compressed(tmp_path / "bad.npz", **arrays, __meta__=np.array(json.dumps(meta)))
    with pytest.raises(ModelFormatError, match="format_version 2") as err:
        LinearSVM.load(tmp_path / "bad.npz")
    assert err.value.field == "params"
