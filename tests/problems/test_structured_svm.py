"""StructuredSVM / StructuredSVMCV (issue 37): the estimators of a user's StructuredModel.

On a tiny multi-label model with label-pair potentials whose outputs are enumerated
(:mod:`tests.problems.structured_test_models`): every solver object (BMRM, the n-slack method,
LS-BMRM, SPOM; serial, threads and processes), MTL^struct with the model's groups, scikit-learn's
contract (``clone``, ``get_params`` / ``set_params``, ``GridSearchCV`` over ``C`` and over
``solver__eps``, ``cross_val_score``), the model file (round trip; a class that cannot be imported
or parameters that do not rebuild it refused naming the file and the class), the CV twin with
validation data and with a held-out fraction, and the errors of bad input.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

import problems
from cutplane.exceptions import ConvergenceWarning, InputError, ModelFormatError
from oracles.structured import StructuredModel
from problems.model_io import load_model, save_model
from problems.solvers import SPOM, CuttingPlane
from problems.structured import StructuredSVM, StructuredSVMCV
from problems.structured.model_spec import model_params, model_to_meta
from problems.structured.svm import normalised_loss
from tests.problems.structured_test_models import (
    Incomplete,
    MultiLabelPairs,
    MultiLabelWithParams,
    exact_match,
    make_multilabel,
)

C = 10.0
EPS = 0.01


@pytest.fixture(scope="module")
def data():
    model, X, Y = make_multilabel(30, n_features=3, n_labels=3, noise=0.1, seed=1)
    return model, X, Y


@pytest.fixture(scope="module")
def reference(data):
    """The certified BMRM run every other solver is compared with."""
    model, X, Y = data
    return StructuredSVM(model, C=C, solver=CuttingPlane(eps=EPS)).fit(X, Y)


def test_exported_from_problems():
    assert problems.StructuredSVM is StructuredSVM and problems.StructuredSVMCV is StructuredSVMCV
    assert issubclass(StructuredSVMCV, StructuredSVM)
    params = StructuredSVM(MultiLabelPairs(2, 2)).get_params(deep=False)
    assert params["C"] == 1.0 and params["regularizer"] == "ssvm" and params["p"] == 1.5 and params["solver"] is None


def test_fit_predict_score_and_the_certificate(data, reference):
    model, X, Y = data
    est = reference
    assert est.coef_.shape == (model.dim,) and est.result_.status == "converged"
    assert est.gap_ <= EPS * (1 + 1e-9) and est.lower_bound_ <= est.objective_
    assert est.C_ == C and len(est.path_["C"]) == 1 and est.validation_ is None
    pred = est.predict(X)
    assert isinstance(pred, list) and len(pred) == len(X) and all(p.shape == (3,) for p in pred)
    expected = np.mean([1.0 - np.sum(p != y) / 3.0 for p, y in zip(pred, Y)])
    assert est.score(X, Y) == pytest.approx(expected) and 0.5 < est.score(X, Y) <= 1.0
    # the objective at coef_ is F = 1/2 ||w||^2 + C * mean hinge, recomputed by enumeration
    hinge = np.mean([max(model.loss(y, o) + est.coef_ @ (model.joint_feature(x, o) - model.joint_feature(x, y))
                         for o in model._outputs) for x, y in zip(X, Y)])  # fmt: skip
    assert est.objective_ == pytest.approx(0.5 * est.coef_ @ est.coef_ + C * hinge, rel=1e-9)
    assert est.groups_.shape == (model.dim,) and set(est.template_weights_) == {"0", "1", "2", "3"}


@pytest.mark.parametrize(
    "solver",
    [
        CuttingPlane(method="n-slack", eps=EPS),
        CuttingPlane(method="ls-bmrm", eps=EPS),
        CuttingPlane(eps=EPS, executor="threads", n_workers=2),
        CuttingPlane(eps=EPS, cache_steps=3),
    ],
    ids=["n-slack", "ls-bmrm", "threads", "cache"],
)
def test_every_cutting_plane_method_reaches_the_same_certified_optimum(data, reference, solver):
    model, X, Y = data
    est = StructuredSVM(model, C=C, solver=solver).fit(X, Y)
    assert est.gap_ <= EPS * (1 + 1e-9)
    # two certified runs: each objective within its gap of the other's lower bound
    assert est.objective_ >= reference.lower_bound_ - 1e-9 and reference.objective_ >= est.lower_bound_ - 1e-9
    assert abs(est.objective_ - reference.objective_) <= 2 * EPS


def test_processes_executor(data, reference):
    model, X, Y = data
    est = StructuredSVM(model, C=C, solver=CuttingPlane(eps=EPS, executor="processes", n_workers=2)).fit(X, Y)
    assert est.objective_ == pytest.approx(reference.objective_, rel=1e-9)
    np.testing.assert_allclose(est.coef_, reference.coef_, rtol=1e-7, atol=1e-9)


def test_spom_is_never_below_the_certified_lower_bound(data, reference):
    model, X, Y = data
    est = StructuredSVM(model, C=C, solver=SPOM(epochs=10, seed=0)).fit(X, Y)
    assert est.lower_bound_ is None and est.gap_ is None and est.n_iter_ == 10
    assert est.objective_ >= reference.lower_bound_ - 1e-9
    assert len(est.predict(X)) == len(X)


def test_mtl_with_the_models_groups(data):
    model, X, Y = data
    est = StructuredSVM(model, C=C, regularizer="mtl", solver=CuttingPlane(eps=EPS)).fit(X, Y)
    assert est.gap_ <= EPS * (1 + 1e-9)
    weights = np.array([est.template_weights_[str(j)] for j in range(4)])
    assert weights.min() >= -1e-9 and weights.sum() == pytest.approx(1.0, abs=1e-6)  # mu on the simplex
    norms = np.array([np.linalg.norm(est.coef_[model.groups == j]) for j in range(4)])
    np.testing.assert_allclose([est.template_norms_[str(j)] for j in range(4)], norms, rtol=1e-12)
    # F = 1/2 (sum_j ||w_j||)^2 + C * mean hinge
    assert est.objective_ >= 0.5 * norms.sum() ** 2
    pmtl = StructuredSVM(model, C=C, regularizer="pmtl", p=1.5, solver=CuttingPlane(eps=EPS)).fit(X, Y)
    assert pmtl.gap_ <= EPS * (1 + 1e-9)


def test_mtl_needs_groups_and_pmtl_needs_p_above_one(data):
    _, X, Y = data

    class NoGroups(MultiLabelPairs):
        groups = None

        def __init__(self):
            super().__init__(3, 3)
            self.groups = None

    with pytest.raises(InputError, match="has no groups") as err:
        StructuredSVM(NoGroups(), regularizer="mtl").fit(X, Y)
    assert err.value.field == "regularizer"
    with pytest.raises(InputError, match="p > 1"):
        StructuredSVM(MultiLabelPairs(3, 3), regularizer="pmtl", p=1.0).fit(X, Y)


# ----------------------------------------------------------------------------- bad input
def test_bad_data_is_refused_naming_it(data):
    model, X, Y = data
    est = StructuredSVM(model)
    with pytest.raises(InputError, match="30 inputs but Y has 29") as err:
        est.fit(X, Y[:-1])
    assert err.value.field == "Y"
    with pytest.raises(InputError, match="no examples") as err:
        est.fit([], [])
    assert err.value.field == "X"
    with pytest.raises(InputError, match="sequence"):
        est.fit("abc", "abc")


def test_a_model_without_the_contract_names_what_is_missing(data):
    _, X, Y = data
    with pytest.raises(InputError, match=r"Incomplete .*has no dim, loss_augmented_argmax\(\)") as err:
        StructuredSVM(Incomplete()).fit(X, Y)
    assert err.value.field == "model"

    class ZeroDim(MultiLabelPairs):
        def __init__(self):
            super().__init__(3, 3)
            self.dim = 0

    with pytest.raises(InputError, match="dim must be an integer >= 1"):
        StructuredSVM(ZeroDim()).fit(X, Y)


def test_the_models_own_errors_come_from_the_oracles_checks(data):
    _, X, Y = data

    class Short(MultiLabelPairs):
        def joint_feature(self, x, y):
            return super().joint_feature(x, y)[:-1]

    with pytest.raises(InputError, match="joint_feature"):
        StructuredSVM(Short(3, 3)).fit(X, Y)


def test_a_grid_on_the_plain_estimator_names_the_cv_one(data):
    model, X, Y = data
    with pytest.raises(InputError, match="StructuredSVMCV") as err:
        StructuredSVM(model, C=[1.0, 10.0]).fit(X, Y)
    assert err.value.field == "C"
    with pytest.raises(InputError) as err:
        StructuredSVM(model, scoring="accuracy").fit(X, Y)
    assert err.value.field == "scoring"


def test_predict_before_fit_is_refused(data):
    model, X, _ = data
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        StructuredSVM(model).predict(X)


# ------------------------------------------------------------------------------ scoring
def test_normalised_loss_and_a_scoring_callable(data, reference):
    model, X, Y = data
    assert normalised_loss(model, [np.array([0, 1, 1])], [np.array([1, 1, 0])]).tolist() == [pytest.approx(2 / 3)]

    class Scalar(StructuredModel):  # 0/1 loss on non-array outputs: not normalised
        dim = 1

    assert normalised_loss(Scalar(), ["a", "b"], ["a", "c"]).tolist() == [0.0, 1.0]
    est = clone(reference).set_params(scoring=exact_match).fit(X, Y)
    assert est.score(X, Y) == pytest.approx(exact_match(Y, est.predict(X)))


# ------------------------------------------------------------------- scikit-learn's contract
def test_clone_get_params_set_params(data):
    model, _, _ = data
    est = StructuredSVM(model, C=3.0, regularizer="mtl", solver=CuttingPlane(eps=0.05, max_iter=50))
    twin = clone(est)
    assert (
        twin is not est
        and twin.solver is not est.solver
        and twin.get_params(deep=False).keys()
        == {
            "model",
            "C",
            "regularizer",
            "p",
            "solver",
            "scoring",
        }
    )
    assert twin.solver == est.solver and twin.get_params()["solver__eps"] == 0.05
    twin.set_params(C=5.0, solver__max_iter=20)
    assert twin.C == 5.0 and twin.solver.max_iter == 20 and est.solver.max_iter == 50


def test_grid_search_over_C_and_over_a_solver_option_and_cross_val_score(data):
    model, X, Y = data
    est = StructuredSVM(model, solver=CuttingPlane(eps=0.05))
    search = GridSearchCV(est, {"C": [0.1, 10.0]}, cv=2, error_score="raise").fit(X, Y)
    assert search.best_params_["C"] in (0.1, 10.0) and search.best_estimator_.C_ == search.best_params_["C"]
    search = GridSearchCV(est, {"solver__eps": [0.5, 0.05]}, cv=2, error_score="raise").fit(X, Y)
    assert search.best_estimator_.solver.eps == search.best_params_["solver__eps"]
    scores = cross_val_score(est, X, Y, cv=3, error_score="raise")
    assert scores.shape == (3,) and np.all((0 <= scores) & (scores <= 1))
    cv_scores = cross_val_score(StructuredSVMCV(model, Cs=[0.1, 10.0]), X, Y, cv=2, error_score="raise")
    assert cv_scores.shape == (2,)


# ------------------------------------------------------------------------------ model files
@pytest.mark.parametrize("model_class", [MultiLabelPairs, MultiLabelWithParams])
def test_save_load_round_trip(tmp_path, data, model_class):
    _, X, Y = data
    model = model_class(3, 3)
    est = StructuredSVM(model, C=C, regularizer="mtl", solver=CuttingPlane(eps=EPS), scoring=exact_match).fit(X, Y)
    path = est.save(tmp_path / "m.npz")
    back = StructuredSVM.load(path)
    assert type(back) is StructuredSVM and type(back.model) is model_class and back.model is not model
    assert back.model.n_features == 3 and back.model.n_labels == 3 and back.model.dim == model.dim
    np.testing.assert_array_equal(back.coef_, est.coef_)
    assert [p.tolist() for p in back.predict(X)] == [p.tolist() for p in est.predict(X)]
    assert back.scoring is exact_match and back.score(X, Y) == est.score(X, Y)
    assert back.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert back.solver == est.solver and back.regularizer == "mtl" and back.C == C
    assert (back.objective_, back.lower_bound_, back.gap_, back.n_iter_) == (
        est.objective_,
        est.lower_bound_,
        est.gap_,
        est.n_iter_,
    )
    assert back.template_weights_ == pytest.approx(est.template_weights_) and back.C_ == C
    np.testing.assert_array_equal(back.groups_, est.groups_)


def test_a_lambda_scoring_is_not_stored(tmp_path, data, reference):
    _, X, Y = data
    est = clone(reference).set_params(scoring=lambda a, b: 0.5).fit(X, Y)
    with pytest.warns(UserWarning, match="not stored"):
        path = est.save(tmp_path / "m.npz")
    back = StructuredSVM.load(path)
    assert back.scoring is None and back.score(X, Y) == reference.score(X, Y)


def _tamper(path, out, **changes):
    arrays, meta = load_model(path)
    meta = {k: v for k, v in meta.items() if k not in ("format", "format_version", "arrays")}
    meta["model"] = dict(meta["model"], **changes)
    return save_model(out, arrays, meta)


@pytest.mark.parametrize(
    "name",
    ["tests.problems.structured_test_models:Gone", "no_such_module_xyz:MultiLabelPairs", "not a path"],
)
def test_load_refuses_a_class_that_cannot_be_imported(tmp_path, reference, name):
    path = reference.save(tmp_path / "m.npz")
    bad = _tamper(path, tmp_path / "bad.npz", **{"class": name})
    with pytest.raises(ModelFormatError) as err:
        StructuredSVM.load(bad)
    assert "bad.npz" in str(err.value) and err.value.field == "model"
    assert name.partition(":")[2] in str(err.value) if ":" in name else "model" in str(err.value)


def test_load_refuses_parameters_that_do_not_rebuild_the_model(tmp_path, reference):
    path = reference.save(tmp_path / "m.npz")
    bad = _tamper(path, tmp_path / "bad.npz", params={"n_features": 3, "n_labelz": 3})
    with pytest.raises(ModelFormatError, match="do not rebuild the model class.*MultiLabelPairs") as err:
        StructuredSVM.load(bad)
    assert "bad.npz" in str(err.value)
    wrong_dim = _tamper(path, tmp_path / "dim.npz", params={"n_features": 4, "n_labels": 3})
    with pytest.raises(ModelFormatError, match="dim") as err:
        StructuredSVM.load(wrong_dim)
    assert err.value.field == "coef"


def test_save_refuses_a_model_that_could_not_be_rebuilt(tmp_path, data):
    _, X, Y = data

    class Local(MultiLabelPairs):
        pass

    est = StructuredSVM(Local(3, 3), solver=CuttingPlane(eps=0.1)).fit(X, Y)
    with pytest.raises(InputError, match="inside a function"):
        est.save(tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def test_model_params_of_the_dict_and_of_get_params():
    assert model_params(MultiLabelPairs(3, np.int64(2))) == {"n_features": 3, "n_labels": 2, "pairs": True}
    assert model_to_meta(MultiLabelWithParams(2, 2)) == {
        "class": "tests.problems.structured_test_models:MultiLabelWithParams",
        "params": {"n_features": 2, "n_labels": 2, "pairs": True},
    }

    class Hidden(MultiLabelPairs):
        def __init__(self, n):
            super().__init__(n, 2)
            del self.n_features

    with pytest.raises(InputError, match=r"\['n'\]"):
        model_params(Hidden(3))


# ------------------------------------------------------------------------------ the CV twin
def test_cv_with_validation_data(data):
    model, X, Y = data
    cv = StructuredSVMCV(model, Cs=[0.1, 1.0, 10.0], solver=CuttingPlane(eps=EPS))
    cv.fit(X[:20], Y[:20], validation_data=(X[20:], Y[20:]))
    assert cv.path_["C"] == [0.1, 1.0, 10.0] and cv.C_ in (0.1, 1.0, 10.0) and cv.path_result_ is not None
    assert cv.validation_["source"] == "data" and cv.validation_["n_examples"] == 10
    assert cv.score(X[20:], Y[20:]) == pytest.approx(cv.path_["validation_score"][cv.best_index_])
    assert cv.result_ is cv.path_result_.results[cv.best_index_]
    assert all(s == "converged" for s in cv.path_["status"])
    # each point of the warm-started path is the plain estimator's optimum at its C
    plain = StructuredSVM(model, C=cv.C_, solver=CuttingPlane(eps=EPS)).fit(X[:20], Y[:20])
    assert abs(plain.objective_ - cv.objective_) <= 2 * EPS * cv.C_


def test_cv_with_a_held_out_fraction_refits_on_all_examples(data):
    model, X, Y = data
    cv = StructuredSVMCV(model, Cs=[0.1, 10.0], validation_fraction=0.3, solver=CuttingPlane(eps=EPS)).fit(X, Y)
    assert cv.validation_["source"] == "fraction" and cv.validation_["n_examples"] == 9
    assert cv.validation_["refit"] is True and cv.validation_["n_examples_refit"] == 30
    plain = StructuredSVM(model, C=cv.C_, solver=CuttingPlane(eps=cv.path_["eps"][cv.best_index_])).fit(X, Y)
    assert abs(plain.objective_ - cv.objective_) <= 2 * cv.path_["eps"][cv.best_index_]


def test_cv_auto_grid_scoring_spom_and_its_model_file(tmp_path, data):
    model, X, Y = data
    cv = StructuredSVMCV(model, solver=CuttingPlane(eps=0.05), scoring=exact_match).fit(X, Y)
    assert tuple(cv.path_["C"]) == StructuredSVMCV.AUTO_C_GRIDS["ssvm"] and cv.validation_["metric"] == "scoring"
    back = StructuredSVM.load(cv.save(tmp_path / "cv.npz"))
    assert type(back) is StructuredSVMCV and back.C_ == cv.C_ and back.path_ == cv.path_
    np.testing.assert_array_equal(back.coef_, cv.coef_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        online = StructuredSVMCV(model, Cs=[1.0, 10.0], solver=SPOM(epochs=3)).fit(
            X[:20], Y[:20], validation_data=(X[20:], Y[20:])
        )
    assert online.path_result_ is None and online.gap_ is None and online.C_ in (1.0, 10.0)


def test_cv_refuses_both_validation_sources(data):
    model, X, Y = data
    with pytest.raises(InputError, match="not both"):
        StructuredSVMCV(model, Cs=[1.0, 10.0], validation_fraction=0.2).fit(X, Y, validation_data=(X, Y))
    with pytest.raises(InputError, match="pair") as err:
        StructuredSVMCV(model, Cs=[1.0, 10.0]).fit(X, Y, validation_data=X)
    assert err.value.field == "validation_data"


def test_an_approximate_model_gives_an_inexact_certificate(data):
    from cutplane.exceptions import InexactCutWarning

    _, X, Y = data

    class Approximate(MultiLabelPairs):
        approximate = True

    with pytest.warns(InexactCutWarning):
        est = StructuredSVM(Approximate(3, 3), C=C, solver=CuttingPlane(eps=EPS)).fit(X, Y)
    assert est.result_.exact is False and len(est.predict(X)) == len(X)
