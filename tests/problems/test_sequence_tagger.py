"""SequenceTagger: MTL vs SSVM on a generated task, certificates, template selection, model files."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from cutplane.exceptions import InputError, ModelFormatError
from problems.sequence.tagger import SequenceTagger
from problems.solvers import SPOM, CuttingPlane
from problems.synthetic import make_tagging_task


@pytest.fixture(scope="module")
def task():
    # 3 informative columns (label-dependent words half of the time) and 10 noise columns
    return make_tagging_task(
        n_train=80, n_test=200, length=10, n_labels=3, n_informative=3, n_noise=10, signal=0.5, seed=1
    )


@pytest.fixture(scope="module")
def fitted(task):
    mtl = SequenceTagger(task.templates, C=10.0, regularizer="mtl", solver=CuttingPlane(eps=0.1))
    ssvm = SequenceTagger(task.templates, C=10.0, regularizer="ssvm", solver=CuttingPlane(eps=0.1))
    mtl.fit(task.X_train, task.y_train)
    ssvm.fit(task.X_train, task.y_train)
    return mtl, ssvm


def test_certificates(fitted):
    for est in fitted:
        h = est.result_.history
        assert est.result_.status == "converged"
        assert est.gap_ <= 0.1 + 1e-12
        assert est.lower_bound_ <= est.objective_ + 1e-9
        assert np.all(np.diff(h.lower) >= -1e-12)
        assert np.all(h.lower <= h.best_upper + 1e-9)


def test_mtl_drops_noise_templates_and_predicts_as_well(task, fitted):
    mtl, ssvm = fitted
    norms = mtl.template_norms_
    top = max(norms.values())
    for name in task.noise:
        assert norms[name] <= 1e-5 * top, (name, norms[name])
        assert name not in mtl.active_templates_
    # SSVM spreads weight on the noise templates
    assert all(ssvm.template_norms_[name] > 1e-3 for name in task.noise)
    # the template weights mu are on the simplex and vanish on the noise templates
    mu = mtl.template_weights_
    assert sum(mu.values()) == pytest.approx(1.0, abs=1e-6)
    assert all(mu[name] <= 1e-5 for name in task.noise)
    assert mtl.score(task.X_test, task.y_test) >= ssvm.score(task.X_test, task.y_test)


def test_skipping_zero_templates_gives_same_predictions(task, fitted):
    mtl, _ = fitted
    assert mtl.n_active_templates_ < len(mtl.feature_index_.templates)
    assert mtl.predict(task.X_test) == mtl.predict(task.X_test, all_templates=True)


def test_pmtl_two_equals_ssvm_objective(task, fitted):
    _, ssvm = fitted
    p2 = SequenceTagger(task.templates, C=10.0, regularizer="pmtl", p=2.0, solver=CuttingPlane(eps=0.1)).fit(
        task.X_train, task.y_train
    )
    # both certified within eps of the same optimum
    assert abs(p2.objective_ - ssvm.objective_) <= 0.2 + 1e-9
    assert p2.lower_bound_ <= ssvm.objective_ + 1e-9 and ssvm.lower_bound_ <= p2.objective_ + 1e-9


def test_save_load_roundtrip(tmp_path, task, fitted):
    mtl, _ = fitted
    path = mtl.save(tmp_path / "tagger.npz")
    back = SequenceTagger.load(path)
    assert back.predict(task.X_test) == mtl.predict(task.X_test)
    assert back.template_weights_ == mtl.template_weights_
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError):
        SequenceTagger.load(tmp_path / "cut.npz")


def test_risk_floor_cut_for_the_ssvm(task, fitted):
    """``risk_floor_cut=True`` puts the cut ``R >= 0`` beside the first cut of the SSVM (two cuts
    after the first iteration instead of one); the run still certifies the same optimum."""
    _, ssvm = fitted
    floor = SequenceTagger(
        task.templates, C=10.0, regularizer="ssvm", solver=CuttingPlane(eps=0.1, risk_floor_cut=True)
    ).fit(task.X_train, task.y_train)
    assert ssvm.result_.history.n_cuts[0] == 1 and floor.result_.history.n_cuts[0] == 2
    assert floor.result_.status == "converged" and floor.gap_ <= 0.1 + 1e-12
    assert floor.lower_bound_ <= ssvm.objective_ + 1e-9 and ssvm.lower_bound_ <= floor.objective_ + 1e-9
    with pytest.raises(TypeError):  # an option of the cutting-plane solver only: SPOM has none
        SPOM(risk_floor_cut=True)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(C=0.0), "C"),
        (dict(C=-1.0), "C"),
        (dict(solver=CuttingPlane(eps=0.0)), "eps"),
        (dict(regularizer="nope"), "regularizer"),
        (dict(regularizer="pmtl", p=1.0), "p"),
        (dict(solver=CuttingPlane(risk_floor_cut="yes")), "risk_floor_cut"),
        (dict(min_count=0), "min_count"),
        (dict(active_rtol=-1.0), "active_rtol"),
        (dict(solver="spom"), "solver"),
        (dict(solver=SPOM(epochs=0)), "epochs"),
    ],
)
def test_bad_hyper_parameters(task, kwargs, field):
    with pytest.raises(InputError) as err:
        SequenceTagger(task.templates, **kwargs).fit(task.X_train, task.y_train)
    assert err.value.field == field


def test_bad_data(task):
    est = SequenceTagger(task.templates)
    with pytest.raises(InputError):
        est.fit([], [])
    with pytest.raises(InputError):
        est.fit(task.X_train[:3], task.y_train[:2])
    with pytest.raises(InputError):
        est.fit([task.X_train[0], []], [task.y_train[0], []])
    with pytest.raises(InputError):
        est.fit([task.X_train[0]], [task.y_train[0][:-1]])
    with pytest.raises(NotFittedError):
        est.predict(task.X_test)  # not fitted


def test_constructor_is_small_and_solver_options_are_nested(task):
    import inspect

    from sklearn.base import clone

    assert len(inspect.signature(SequenceTagger).parameters) <= 10
    est = SequenceTagger(task.templates, C=2.0, solver=CuttingPlane(eps=0.05, time_limit=60.0))
    params = est.get_params()
    assert params["solver__eps"] == 0.05 and params["solver__time_limit"] == 60.0
    est.set_params(solver__time_limit=30.0, solver__max_iter=7)
    assert est.solver.time_limit == 30.0 and est.solver.max_iter == 7
    twin = clone(est)
    assert twin.solver is not est.solver and twin.get_params() == est.get_params()


def test_grid_search_over_a_solver_option(task):
    from sklearn.model_selection import GridSearchCV

    grid = GridSearchCV(
        SequenceTagger(task.templates, C=1.0, solver=CuttingPlane(max_iter=5)), {"solver__eps": [0.5, 0.2]}, cv=2
    )
    grid.fit(task.X_train[:40], task.y_train[:40])
    assert grid.best_params_["solver__eps"] in (0.5, 0.2)
    assert grid.best_estimator_.solver.eps == grid.best_params_["solver__eps"]
    assert grid.best_estimator_.solver.max_iter == 5


def test_default_solver(task, fitted):
    mtl, _ = fitted
    est = SequenceTagger(task.templates, C=10.0).fit(task.X_train, task.y_train)
    # eps left None: 0.01 * C on F (0.1 at C = 10), max_iter 1000, as a point of SequenceTaggerCV's path
    assert est.solver is None and est.solver_options_.eps == 0.1 and est.solver_options_.max_iter == 1000
    assert est.objective_ == pytest.approx(mtl.objective_, rel=1e-12)


@pytest.mark.parametrize("regularizer, p, expected", [("mtl", 1.0, 2), ("pmtl", 1.5, 2), ("ssvm", 1.0, 1)])
def test_min_count_auto_resolves_by_regularizer(task, regularizer, p, expected):
    """``min_count="auto"`` (the default) is DEFAULT_MIN_COUNTS of the regulariser, and the
    feature index then holds exactly the features seen at least that often."""
    from problems.sequence.feature_index import FeatureIndex
    from problems.template_learning import DEFAULT_MIN_COUNTS

    assert SequenceTagger(task.templates).get_params()["min_count"] == "auto"
    assert DEFAULT_MIN_COUNTS[regularizer] == expected
    est = SequenceTagger(task.templates, C=10.0, regularizer=regularizer, p=p)
    est.make_oracle(task.X_train, task.y_train)
    assert est.min_count_ == expected
    explicit = FeatureIndex(task.templates, min_count=expected).fit(task.X_train)
    assert est.feature_index_.vocabulary_ == explicit.vocabulary_
    # an explicit integer wins over the regulariser's default
    est1 = SequenceTagger(task.templates, C=10.0, regularizer=regularizer, p=p, min_count=1)
    est1.make_oracle(task.X_train, task.y_train)
    assert est1.min_count_ == 1 and est1.feature_index_.n_features_ >= est.feature_index_.n_features_


@pytest.mark.parametrize("bad", ["two", 1.5, True, 0])
def test_min_count_refuses_other_values(task, bad):
    with pytest.raises(InputError) as err:
        SequenceTagger(task.templates, C=10.0, min_count=bad).fit(task.X_train, task.y_train)
    assert err.value.field == "min_count" and "'auto'" in err.value.message


def test_min_count_auto_survives_save_and_load(task, tmp_path):
    est = SequenceTagger(task.templates, C=10.0, solver=CuttingPlane(eps=1.0)).fit(task.X_train, task.y_train)
    est.save(tmp_path / "m.npz")
    back = SequenceTagger.load(tmp_path / "m.npz")
    assert back.min_count == "auto" and back.min_count_ == 2
    assert back.predict(task.X_test) == est.predict(task.X_test)


def test_relative_gap_through_the_solver(task):
    """``CuttingPlane(rtol=...)``: the tagger stops at a certified relative gap, without a
    ConvergenceWarning though ``eps`` alone is far from reached."""
    import warnings

    from cutplane.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = SequenceTagger(task.templates, C=10.0, solver=CuttingPlane(eps=1e-9, rtol=0.02)).fit(
            task.X_train, task.y_train
        )
    assert est.result_.status == "converged" and est.result_.rtol == 0.02
    assert est.gap_ <= 0.02 * est.objective_ * (1 + 1e-9) and est.gap_ > 1e-9
    with pytest.raises(InputError) as err:
        SequenceTagger(task.templates, C=10.0, solver=CuttingPlane(rtol=1.5)).fit(task.X_train, task.y_train)
    assert err.value.field == "rtol"


def test_cached_cuts_through_the_solver(task):
    """``CuttingPlane(cache_steps=k)``: the tagger's oracle keeps a cache; the certified optimum
    is that of the run without it."""
    plain = SequenceTagger(task.templates, C=10.0, solver=CuttingPlane(eps=0.01, cache_steps=0))
    plain.fit(task.X_train, task.y_train)
    cached = SequenceTagger(task.templates, C=10.0, solver=CuttingPlane(eps=0.01, cache_steps=5))
    cached.fit(task.X_train, task.y_train)
    assert cached.result_.n_cached_cuts > 0 and plain.result_.n_cached_cuts == 0
    assert cached.lower_bound_ <= plain.objective_ + 1e-9 and plain.lower_bound_ <= cached.objective_ + 1e-9
    assert abs(cached.objective_ - plain.objective_) <= 0.02
    with pytest.raises(InputError) as err:
        SequenceTagger(task.templates, C=10.0, solver=CuttingPlane(cache_steps=-1)).fit(task.X_train, task.y_train)
    assert err.value.field == "cache_steps"


def test_auto_min_count_with_a_damaged_regularizer_is_a_model_format_error(task, tmp_path):
    """A file whose params say min_count "auto" but hold no valid regulariser is refused naming
    the file (found by the model-file fuzzer)."""
    import json

    est = SequenceTagger(task.templates, C=10.0, solver=CuttingPlane(eps=1.0)).fit(task.X_train, task.y_train)
    path = tmp_path / "m.npz"
    est.save(path)
    with np.load(path) as z:
        entries = {k: z[k] for k in z.files}
    meta = json.loads(str(entries["__meta__"]))
    meta["params"]["regularizer"] = None
    entries["__meta__"] = np.array(json.dumps(meta))
    bad = tmp_path / "bad.npz"
    np.savez(bad, **entries)
    with pytest.raises(ModelFormatError) as err:
        SequenceTagger.load(bad)
    assert str(bad) in str(err.value)
