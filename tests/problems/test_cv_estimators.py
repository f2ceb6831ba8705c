"""SequenceTaggerCV / DependencyParserCV (issue 36): scikit-learn's ``LogisticRegressionCV``
convention. The plain estimators train one model at a number C; the CV twins train the certified
path over ``Cs``, choose C on held-out data and refit; both follow scikit-learn's contract
(``clone``, ``GridSearchCV`` over a solver option, ``cross_val_score``) and their model files load,
an old file of a grid-fitted ``SequenceTagger`` as a ``SequenceTaggerCV``."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

import problems
from cutplane.exceptions import InputError
from problems.model_io import load_model, save_model
from problems.parsing import DependencyParser, DependencyParserCV
from problems.sequence import SequenceTagger, SequenceTaggerCV
from problems.solvers import CuttingPlane
from problems.synthetic import make_tagging_task
from tests.problems.test_dependency_parser import TEMPLATES as PARSE_TEMPLATES
from tests.problems.test_dependency_parser import make_treebank


@pytest.fixture(scope="module")
def task():
    return make_tagging_task(n_train=40, n_test=10, length=6, n_labels=3, n_informative=2, n_noise=1, seed=5)


def test_exported_from_problems_and_the_task_packages():
    assert problems.SequenceTaggerCV is SequenceTaggerCV and problems.DependencyParserCV is DependencyParserCV
    assert issubclass(SequenceTaggerCV, SequenceTagger) and issubclass(DependencyParserCV, DependencyParser)


def test_default_C_is_a_number_and_the_cv_default_is_auto(task):
    C = SequenceTagger(task.templates).get_params()["C"]
    assert isinstance(C, float) and C == 10000.0
    assert DependencyParser().get_params()["C"] == 1000.0
    params = SequenceTaggerCV(task.templates).get_params()
    assert params["Cs"] == "auto" and "C" not in params
    assert params["validation_fraction"] is None and params["validation_seed"] == 0 and params["refit"] is True
    assert DependencyParserCV().get_params()["Cs"] == "auto"


def test_the_plain_fit_holds_nothing_out(task):
    est = SequenceTagger(task.templates, C=10.0).fit(task.X_train, task.y_train)
    assert est.validation_ is None and len(est.path_["C"]) == 1 and est.path_result_ is None
    with pytest.raises(TypeError):
        est.fit(task.X_train, task.y_train, validation_fraction=0.2)  # a CV estimator's parameter


@pytest.mark.parametrize("C", [[1.0, 10.0], "auto"])
def test_a_grid_on_the_plain_estimators_names_the_cv_one(task, C):
    with pytest.raises(InputError, match="SequenceTaggerCV") as err:
        SequenceTagger(task.templates, C=C).fit(task.X_train, task.y_train)
    assert err.value.field == "C"
    with pytest.raises(InputError, match="DependencyParserCV") as err:
        DependencyParser(PARSE_TEMPLATES, C=C).fit(make_treebank(4, seed=0))
    assert err.value.field == "C"


def test_cv_is_the_grid_fit_then_the_model_at_C_(task):
    cv = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], solver=CuttingPlane(eps=0.1)).fit(
        task.X_train, task.y_train, validation_data=(task.X_test, task.y_test)
    )
    # the grid, then any point the path added past its edge (extend=2 by default)
    assert cv.path_["C"][:2] == [1.0, 10.0] and cv.C_ in cv.path_["C"] and cv.path_result_ is not None
    assert cv.path_result_.lams == tuple(1.0 / C for C in cv.path_["C"])
    # the model at C_ has the plain estimator's attributes and predicts as one
    assert set(cv.template_weights_) == set(cv.feature_index_.template_names)
    assert cv.score(task.X_test, task.y_test) == pytest.approx(cv.path_["validation_score"][cv.best_index_])
    assert cv.result_ is cv.path_result_.results[cv.best_index_]


# max_iter=30 keeps it short: clone, GridSearchCV and cross_val_score are the point
@pytest.mark.filterwarnings("ignore::cutplane.exceptions.ConvergenceWarning")
def test_clone_grid_search_over_a_solver_option_and_cross_val_score(task):
    X, y = task.X_train, task.y_train
    est = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], solver=CuttingPlane(max_iter=30), validation_fraction=0.25)
    twin = clone(est)
    assert twin is not est and twin.solver is not est.solver and twin.get_params() == est.get_params()
    search = GridSearchCV(est, {"solver__eps": [0.5, 0.2]}, cv=2).fit(X, y)
    assert search.best_params_["solver__eps"] in (0.5, 0.2)
    best = search.best_estimator_
    assert best.solver.eps == search.best_params_["solver__eps"] and best.C_ in (1.0, 10.0)
    scores = cross_val_score(est, X, y, cv=2, error_score="raise")
    assert scores.shape == (2,) and np.all((scores > 0) & (scores <= 1))

    trees = make_treebank(12, seed=2)
    parser = DependencyParserCV(PARSE_TEMPLATES, Cs=[0.1, 10.0], regularizer="ssvm", validation_fraction=0.3)
    assert clone(parser).get_params() == parser.get_params()
    psearch = GridSearchCV(parser, {"solver": [CuttingPlane(eps=0.5), CuttingPlane(eps=0.2)]}, cv=2).fit(trees)
    assert psearch.best_estimator_.C_ in (0.1, 10.0)
    pscores = cross_val_score(parser, trees, cv=2, error_score="raise")
    assert pscores.shape == (2,) and np.all((pscores >= 0) & (pscores <= 1))


def test_an_old_grid_fitted_tagger_file_loads_as_the_cv_estimator(task, tmp_path):
    """A model file written by ``SequenceTagger(C=[...]).fit(..., validation_fraction=...)``
    before the CV estimators: estimator ``SequenceTagger``, ``params["C"]`` a grid. It loads as a
    SequenceTaggerCV with ``Cs`` the stored grid, the held-out fraction and seed of its
    validation record, and the stored ``C_`` / ``path_``; it predicts as the model saved."""
    cv = SequenceTaggerCV(task.templates, Cs=[1.0, 10.0], validation_fraction=0.25, validation_seed=3)
    cv.fit(task.X_train, task.y_train)
    cv.save(tmp_path / "new.npz")
    arrays, meta = load_model(tmp_path / "new.npz")
    params = {k: v for k, v in meta["params"].items() if k not in ("Cs", "validation_fraction", "validation_seed")}
    params.pop("refit")
    old = {k: v for k, v in meta.items() if k not in ("arrays", "format", "format_version")}
    old.update(estimator="SequenceTagger", params=dict(params, C=[1.0, 10.0]))
    save_model(tmp_path / "old.npz", arrays, old)
    for cls in (SequenceTagger, SequenceTaggerCV):
        back = cls.load(tmp_path / "old.npz")
        assert type(back) is SequenceTaggerCV
        assert back.Cs == [1.0, 10.0] and back.validation_fraction == 0.25 and back.validation_seed == 3
        assert back.C_ == cv.C_ and back.path_ == cv.path_ and back.best_index_ == cv.best_index_
        assert back.predict(task.X_test) == cv.predict(task.X_test)
    # an old "auto" file too
    old["params"] = dict(params, C="auto")
    save_model(tmp_path / "auto.npz", arrays, old)
    assert SequenceTagger.load(tmp_path / "auto.npz").Cs == "auto"
    # a CV file refuses to load as another estimator's, and another's as a tagger
    with pytest.raises(Exception, match="SequenceTaggerCV"):
        DependencyParser.load(tmp_path / "new.npz")


def test_cv_parser_saves_and_loads(tmp_path):
    train, dev = make_treebank(14, seed=0), make_treebank(6, seed=1)
    est = DependencyParserCV(PARSE_TEMPLATES, Cs=[0.1, 10.0], regularizer="ssvm").fit(train, validation_data=dev)
    est.save(tmp_path / "p.npz")
    back = DependencyParserCV.load(tmp_path / "p.npz")
    assert type(back) is DependencyParserCV and back.Cs == [0.1, 10.0] and back.C_ == est.C_
    assert [h.tolist() for h in back.predict(dev)] == [h.tolist() for h in est.predict(dev)]
    plain = DependencyParser(PARSE_TEMPLATES, C=10.0, regularizer="ssvm").fit(train)
    plain.save(tmp_path / "q.npz")
    assert type(DependencyParserCV.load(tmp_path / "q.npz")) is DependencyParser
