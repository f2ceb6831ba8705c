"""The structural SVM of any user's model: :class:`StructuredSVM` and :class:`StructuredSVMCV`.

A model (:class:`oracles.structured.StructuredModel`: ``dim``, ``joint_feature(x, y)``,
``argmax(x, w)``, ``loss(y, y_hat)``, ``loss_augmented_argmax(x, y, w)``, optionally ``groups``)
and a list of examples give the oracles every solver takes
(:class:`oracles.structured.StructuredOracle`); the estimator minimises

    F(w) = Omega(w) + C * (1/n) sum_i max_y [Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>]

with ``Omega`` chosen by name as for the built-in structured tasks
(:mod:`problems.template_learning`): ``"ssvm"`` (``1/2 ||w||^2``, the 1-slack structural SVM of
Joachims et al. 2009), ``"mtl"`` (``1/2 (sum_j ||w_j||)^2`` over the model's feature groups,
MTL^struct of Mao and Tsang 2013) or ``"pmtl"`` (``1/2 (sum_j ||w_j||^p)^(2/p)``, ``p > 1``). The
solver object (:mod:`problems.solvers`) trains it: :class:`~problems.solvers.CuttingPlane` (BMRM,
LS-BMRM, Kelley or the n-slack method; certified gap) or :class:`~problems.solvers.SPOM` (the
online proximal baseline of Martins et al. 2011, no certificate). The engine minimises ``F / C``
(``lam = 1/C``); the objective, bounds and tolerances reported are on the scale of ``F``.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from cutplane.exceptions import InputError, ModelFormatError
from problems.model_schemas import ModelSchema, check_schema, json_type_ok
from problems.model_selection import SELECTION_META, load_selection, selection_meta
from problems.solvers import Param, make_executor, params_from_meta, params_to_meta, release_executor
from problems.structured.model_spec import (
    callable_path,
    check_model,
    import_object,
    model_from_meta,
    model_to_meta,
)
from problems.template_learning import REGULARIZERS, TemplateLearnerCVMixin, TemplateLearnerMixin
from problems.validation import check_choice, check_positive

__all__ = ["StructuredSVM", "StructuredSVMCV", "MODEL_SCHEMA", "check_examples", "normalised_loss"]

_MODEL_NAME = "StructuredSVM"
_CV_MODEL_NAME = "StructuredSVMCV"


def check_examples(X, Y=None, *, name="X"):
    """Inputs ``X`` (and outputs ``Y``) as lists: sequences (not strings) of one length, not empty.

    Parameters
    ----------
    X : sequence of length n_samples
        Inputs of any type the model reads.
    Y : sequence of length n_samples, optional
        Outputs of any type the model's ``joint_feature`` and ``loss`` take.
    name : str
        The argument named in errors (``"validation_data"`` for the validation pair).

    Returns
    -------
    X : list
    Y : list or None

    Raises
    ------
    InputError
        Not a sequence, empty, or ``X`` and ``Y`` of different lengths.
    """
    X = _as_list(X, name, "inputs")
    if not X:
        raise InputError("no examples: give at least one input and its output", field=name)
    if Y is None:
        return X, None
    Y = _as_list(Y, "Y" if name == "X" else name, "outputs")
    if len(Y) != len(X):
        raise InputError(
            f"X has {len(X)} inputs but Y has {len(Y)} outputs: give one output per input",
            field="Y" if name == "X" else name,
        )
    return X, Y


def _as_list(seq, name, what):
    if isinstance(seq, (str, bytes)) or not hasattr(seq, "__len__") or not hasattr(seq, "__getitem__"):
        raise InputError(f"must be a sequence (a list) of {what}, got {type(seq).__name__}", field=name)
    return list(seq)


def _output_length(y) -> int:
    """The Hamming normaliser of an output: its number of entries when it is array-like (an
    ndarray, list or tuple of numbers: where the contract's default loss counts differing
    entries), at least 1; else 1 (the 0/1 loss)."""
    try:
        a = np.asarray(y)
    except (TypeError, ValueError):  # ragged: not an array
        return 1
    if a.ndim >= 1 and a.dtype != object:
        return max(1, int(a.size))
    return 1


def normalised_loss(model, Y_true, Y_pred) -> np.ndarray:
    """``model.loss(y, y_hat)`` per example, divided by the length of ``y`` for array-like outputs
    (ndarrays, lists or tuples of numbers: the Hamming loss becomes the share of wrong entries);
    for other outputs as it is (the 0/1 loss).

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    return np.array([float(model.loss(y, yh)) / _output_length(y) for y, yh in zip(Y_true, Y_pred)])


def _check_scoring(value, name):
    if not callable(value):
        raise InputError(
            f"must be a callable scoring(Y_true, Y_pred) -> float or None, got {type(value).__name__}", field=name
        )
    return value


def _validation_pair(data):
    """``(X_dev, Y_dev)`` of ``validation_data``."""
    if isinstance(data, (str, bytes)) or not isinstance(data, (tuple, list)) or len(data) != 2:
        raise InputError(
            f"validation_data must be a pair (X_dev, Y_dev) of inputs and outputs, got {type(data).__name__}",
            field="validation_data",
        )
    return check_examples(data[0], data[1], name="validation_data")


def _model_groups(model, regularizer):
    """The feature groups of ``model`` (``groups``, an int array of shape (dim,)) and their names
    (the group ids as str); one group ``"0"`` when the model has none, which only ``"ssvm"``
    accepts."""
    from cutplane.groups import as_group_ids

    dim = int(model.dim)
    groups = getattr(model, "groups", None)
    if groups is None:
        if regularizer != "ssvm":
            raise InputError(
                f"regularizer={regularizer!r} weights groups of features: {type(model).__name__} has no groups "
                "(an int array of shape (dim,), the group of each coordinate of the joint feature)",
                field="regularizer",
            )
        return np.zeros(dim, dtype=np.intp), ["0"]
    try:
        ids = as_group_ids(np.asarray(groups), dim)
    except InputError as exc:
        raise InputError(f"{type(model).__name__}.groups: {exc.message}", field="model") from None
    n_groups = int(ids.max()) + 1 if ids.size else 1
    return ids, [str(j) for j in range(n_groups)]


class StructuredSVM(TemplateLearnerMixin, BaseEstimator):
    """The structural SVM of a user's model, trained with a certified duality gap.

    Parameters
    ----------
    model : StructuredModel
        The model (:class:`oracles.structured.StructuredModel`, or any object with its attribute
        ``dim`` and methods ``joint_feature``, ``argmax``, ``loss`` and
        ``loss_augmented_argmax``); its ``groups`` (int array of shape (dim,)) are the feature
        groups of ``"mtl"`` / ``"pmtl"``. Stored as given; checked at ``fit``.
    C : float, default=1.0
        Weight of the mean structured hinge loss: ``fit`` trains one model at this C. To
        choose C on held-out data, use :class:`StructuredSVMCV` (a grid given here is refused).
    regularizer : {"ssvm", "mtl", "pmtl"}, default="ssvm"
        ``Omega`` by name: ``1/2 ||w||^2``, or the squared (p-)block norm over the model's
        ``groups`` (:func:`problems.template_learning.make_regularizer`).
    p : float, default=1.5
        Exponent of the p-block norm for ``regularizer="pmtl"`` (``p > 1``).
    solver : CuttingPlane, SPOM or None, default=None
        How ``F`` is minimised (:mod:`problems.solvers`); None: ``CuttingPlane()``. An ``eps``
        left None is ``0.01 * C`` on ``F`` (:data:`DEFAULT_PATH_EPS` on the engine's scale) and
        a ``max_iter`` left None :data:`DEFAULT_PATH_MAX_ITER`. The solver's ``executor``
        (``"threads"``, ``"processes"``, ``"dask"`` or an executor) maps the oracle over
        chunks of examples; with processes or Dask the model and the examples must pickle (a
        model class defined at the top level of an importable module). ``cache_steps=k > 0``
        turns on the oracle's constraint cache (:attr:`CACHE_SIZE` outputs per example). Its
        options are reachable as ``solver__eps`` etc. through ``get_params`` / ``set_params``.
    scoring : callable, optional
        ``scoring(Y_true, Y_pred) -> float`` (larger is better): what :meth:`score` returns
        and :class:`StructuredSVMCV` chooses C by. None: the mean of one minus the normalised
        loss (:func:`normalised_loss`: the model's loss divided by the output's length for
        arrays, as it is otherwise), in [0, 1] for the default Hamming and 0/1 losses.

    Attributes
    ----------
    coef_ : ndarray of shape (dim,)
        ``w``.
    groups_ : ndarray of int of shape (dim,)
        The feature groups used (the model's ``groups``; all 0 when it has none).
    objective_, lower_bound_, gap_ : float
        On the scale of ``F``; ``lower_bound_`` and ``gap_`` are None for a
        :class:`~problems.solvers.SPOM` solver (it certifies nothing).
    n_iter_ : int
        Engine iterations, or SPOM's completed epochs.
    result_ : cutplane.Result or cutplane.online.SPOMResult
        The solver's result (scale ``F / C``) with its history (not stored in model files).
    solver_options_ : CuttingPlaneOptions or SPOMOptions
        The solver's checked options at ``fit``.
    template_weights_ : dict of str to float
        The group weights ``mu`` by group id (as str): the reduced problem's duals for
        ``"mtl"`` / ``"pmtl"``, all 1 for ``"ssvm"``.
    template_norms_ : dict of str to float
        ``||w_j||`` by group id.
    active_templates_ : list of str
        The groups whose weight norm exceeds :attr:`ACTIVE_RTOL` times the largest.
    n_active_templates_ : int
    C_ : float
        The C of the model (``C``; for :class:`StructuredSVMCV`, the one chosen).
    best_index_ : int
    path_ : dict of str to list
        One row per C (one for a single C), as :class:`problems.sequence.SequenceTagger`'s.
    path_result_ : cutplane.PathResult or None
    validation_ : dict or None
        The validation data used (None for a single C).

    Examples
    --------
    ``StructuredSVM(MyModel(), C=10.0).fit(X, Y).predict(X_test)``;
    ``StructuredSVM(model, solver=CuttingPlane(method="n-slack", executor="threads"))``.
    """

    CV_NAME = _CV_MODEL_NAME
    #: The ``estimator`` field of the model files.
    MODEL_NAME = _MODEL_NAME
    #: Outputs the oracle keeps per example (its ``cache_size``) when the solver asks for cuts
    #: from the constraint cache (``CuttingPlane(cache_steps=k)``, ``k > 0``); none otherwise.
    CACHE_SIZE: ClassVar[int] = 5
    #: The declarative parameter table (checked at ``fit``; the solver checks its own).
    PARAMETERS = {
        "model": Param(lambda v, n: check_model(v, n), "the structured model"),
        "C": TemplateLearnerMixin.PARAMETERS["C"],
        "regularizer": Param(lambda v, n: check_choice(v, n, REGULARIZERS), "Omega by name"),
        "p": Param(lambda v, n: check_positive(v, n), "exponent of the p-block norm (pmtl)"),
        "scoring": Param(_check_scoring, "scoring(Y_true, Y_pred) -> float", allow_none=True),
    }

    def __init__(self, model, *, C=1.0, regularizer="ssvm", p=1.5, solver=None, scoring=None):
        self.model = model
        self.C = C
        self.regularizer = regularizer
        self.p = p
        self.solver = solver
        self.scoring = scoring

    def __sklearn_tags__(self):
        """scikit-learn's tags: the inputs are a list of any objects and ``fit`` needs outputs."""
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = True
        return tags

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y, *, callback=None):
        """Train one model at ``C`` on inputs ``X`` with outputs ``Y``.

        Parameters
        ----------
        X : list of length n_samples
        Y : list of length n_samples
        callback : callable, optional
            Passed to the solver: ``callback(IterationInfo)`` per engine iteration,
            ``callback(SPOMInfo)`` per SPOM evaluation (objectives on the scale ``F / C``);
            returning True stops.

        Returns
        -------
        self

        Raises
        ------
        InputError
            A bad parameter (a grid of C names :class:`StructuredSVMCV`; a model without
            ``dim`` or a contract method; ``"mtl"`` / ``"pmtl"`` without groups), ``X`` and
            ``Y`` of different lengths or empty, or what the oracle's checks find in the
            model's answers (:class:`oracles.structured.StructuredOracle`).
        """
        self._fit_one(X, Y, callback=callback)
        self._warn_uncertified()
        return self

    def _fit_task(self, X, Y, *, prm, options, plan, validation_data, callback):
        """Hold out the validation examples of ``plan`` (or read ``validation_data``), build the
        oracle and train (:meth:`_train`); the executor is released."""
        from oracles.structured import StructuredOracle
        from problems.model_selection import holdout_split, take

        if Y is None:
            raise InputError("fit needs the outputs Y, one per input", field="Y")
        X, Y = check_examples(X, Y)
        model = prm["model"]
        groups, names = _model_groups(model, prm["regularizer"])
        X_val = Y_val = None
        if plan.source == "fraction":
            keep, held = holdout_split(len(X), plan.fraction, plan.seed, unit="examples")
            X, Y, X_val, Y_val = take(X, keep), take(Y, keep), take(X, held), take(Y, held)
        elif plan.source == "data":
            X_val, Y_val = _validation_pair(validation_data)
        self.groups_ = groups
        cache_size = self.CACHE_SIZE if (getattr(options, "cache_steps", None) or 0) > 0 else 0
        executor = make_executor(options)
        oracle = None
        try:
            oracle = StructuredOracle(model, X, Y, executor=executor, cache_size=cache_size)
            scorer = None if plan.source is None else self._validation_scorer(X_val, Y_val, plan)
            self._train(
                oracle,
                oracle.example_oracles,
                groups,
                names,
                prm=prm,
                options=options,
                scorer=scorer,
                callback=callback,
            )
        finally:
            if oracle is not None:
                oracle.close()  # the chunks bound to the workers
            release_executor(options, executor)  # worker pools / processes do not outlive fit

    def _validation_scorer(self, X_val, Y_val, plan):
        """``scorer() -> float``: :meth:`score` on the validation examples; sets ``validation_``."""
        self.validation_ = {
            "source": plan.source,
            "fraction": plan.fraction,
            "seed": plan.seed if plan.source == "fraction" else None,
            "n_examples": len(X_val),
            "metric": "scoring" if self.scoring is not None else "one_minus_normalised_loss",
        }
        return lambda: self.score(X_val, Y_val)

    # --------------------------------------------------------------- prediction
    def predict(self, X):
        """The model's prediction ``argmax(x, coef_)`` of each input (its ``batch_argmax`` when
        it has one).

        Parameters
        ----------
        X : list of length n_samples

        Returns
        -------
        list of length n_samples
        """
        check_is_fitted(self, "coef_")
        X, _ = check_examples(X)
        model, w = self.model, self.coef_
        batch = getattr(model, "batch_argmax", None)
        if callable(batch):
            out = list(batch(X, w))
            if len(out) != len(X):
                raise InputError(
                    f"{type(model).__name__}.batch_argmax returned {len(out)} outputs for {len(X)} inputs",
                    field="batch_argmax",
                )
            return out
        return [model.argmax(x, w) for x in X]

    def score(self, X, Y):
        """``scoring(Y, predict(X))`` with a ``scoring`` callable, else the mean of one minus the
        normalised loss (:func:`normalised_loss`).

        Parameters
        ----------
        X : list of length n_samples
        Y : list of length n_samples

        Returns
        -------
        float
        """
        X, Y = check_examples(X, Y)
        pred = self.predict(X)
        if self.scoring is not None:
            return float(self.scoring(Y, pred))
        return float(np.mean(1.0 - normalised_loss(self.model, Y, pred)))

    # ------------------------------------------------------------------- models
    def save(self, path, *, extra_meta=None):
        """Write the model file (npz + JSON, never pickle; :mod:`problems.model_io`).

        It holds ``coef_``, the fitted state (bounds, group weights, the path of C), the
        estimator's parameters with the solver's options, the model's class by import path and
        its constructor parameters (:mod:`problems.structured.model_spec`) and ``scoring`` by
        import path. A ``scoring`` that cannot be imported back (a lambda, a closure) is not
        stored: a ``UserWarning`` says so, and the loaded estimator scores with the default.

        Parameters
        ----------
        path : str or os.PathLike
        extra_meta : dict, optional
            More JSON fields.

        Returns
        -------
        pathlib.Path

        Raises
        ------
        InputError
            The model's class is defined inside a function, or its parameters are not JSON
            (:func:`~problems.structured.model_spec.model_params`).
        """
        from problems.model_io import save_model

        check_is_fitted(self, "coef_")
        scoring = None
        if self.scoring is not None:
            scoring = callable_path(self.scoring)
            if scoring is None:
                warnings.warn(
                    f"scoring {getattr(self.scoring, '__qualname__', self.scoring)!r} cannot be imported back by "
                    "name and is not stored: the loaded model scores with the default",
                    UserWarning,
                    stacklevel=2,
                )
        meta = dict(extra_meta or {})
        meta.update(
            {
                "estimator": self.MODEL_NAME,
                "model": model_to_meta(self.model),
                "scoring": scoring,
                "params": params_to_meta(self, exclude=("model", "scoring")),
                "template_weights": self.template_weights_,
                "active_templates": self.active_templates_,
                "objective": self.objective_,
                "lower_bound": self.lower_bound_,
                "gap": self.gap_,
                "n_iter": self.n_iter_,
                **selection_meta(self),
            }
        )
        return save_model(path, {"coef": self.coef_}, meta)

    @classmethod
    def load(cls, path):
        """Read a model file written by :meth:`save`; validated, never unpickled.

        The model is rebuilt from its class's import path and parameters
        (:func:`~problems.structured.model_spec.model_from_meta`: importing the module it
        names). Returns a :class:`StructuredSVMCV` for its files, else a :class:`StructuredSVM`,
        whichever class ``load`` is called on. ``result_`` and ``path_result_`` are not stored.

        Raises
        ------
        ModelFormatError
            Naming the file: not a model of these estimators, a malformed field, a model class
            that cannot be imported or parameters that do not rebuild it (naming the class),
            ``coef`` of another length than the model's ``dim``.
        """
        from problems.model_io import load_model

        arrays, meta = load_model(path)
        if meta["estimator"] not in (_MODEL_NAME, _CV_MODEL_NAME):
            raise ModelFormatError(
                f"the file holds a {meta['estimator'][:80]} model, expected {_MODEL_NAME} or {_CV_MODEL_NAME}",
                path=path,
                field="estimator",
            )
        check_schema(MODEL_SCHEMA, arrays, meta, path)
        model = model_from_meta(meta["model"], path)
        scoring = None
        if meta["scoring"] is not None:
            try:
                scoring = import_object(meta["scoring"])
            except (ImportError, AttributeError, ValueError) as exc:
                raise ModelFormatError(
                    f"the scoring function {meta['scoring'][:120]!r} cannot be imported ({str(exc)[:160]})",
                    path=path,
                    field="scoring",
                ) from None
        try:
            params, solver = params_from_meta(meta["params"], meta["format_version"])
            klass = StructuredSVMCV if meta["estimator"] == _CV_MODEL_NAME else StructuredSVM
            est = klass(model, solver=solver, scoring=scoring, **params)
            groups, _ = _model_groups(model, check_choice(est.regularizer, "regularizer", REGULARIZERS))
        except (InputError, TypeError) as exc:
            raise ModelFormatError(
                f"bad hyper-parameters: {getattr(exc, 'message', exc)}", path=path, field="params"
            ) from None
        coef = np.asarray(arrays["coef"], dtype=np.float64)
        if coef.shape != (int(model.dim),):
            raise ModelFormatError(
                f"coef has shape {coef.shape}, but the model {meta['model']['class'][:120]!r} rebuilt from the file "
                f"has dim {model.dim}",
                path=path,
                field="coef",
            )
        est.coef_, est.groups_ = coef, groups
        est.template_weights_ = dict(meta["template_weights"])
        est.active_templates_ = list(meta["active_templates"])
        est.n_active_templates_ = len(est.active_templates_)
        est.objective_, est.lower_bound_, est.gap_ = meta["objective"], meta["lower_bound"], meta["gap"]
        est.n_iter_ = meta["n_iter"]
        load_selection(est, meta, path)
        return est


class StructuredSVMCV(TemplateLearnerCVMixin, StructuredSVM):
    """:class:`StructuredSVM` with C chosen on held-out data along a certified path (scikit-learn's
    ``LogisticRegressionCV`` convention, as :class:`problems.sequence.SequenceTaggerCV`).

    ``fit(X, Y, validation_data=(X_dev, Y_dev))`` trains along the grid ``Cs`` (with
    :class:`~problems.solvers.CuttingPlane`, one :func:`cutplane.regularization_path`: each point
    warm-started from the cuts of the previous one and certified on its own; with
    :class:`~problems.solvers.SPOM`, once per C, cold), scores every point on the validation
    examples (:meth:`StructuredSVM.score`), keeps the best (``C_``, ``path_``) and, when the
    validation examples were held out of the training ones, trains again at ``C_`` on all of
    them (``refit``). The fitted estimator is the model at ``C_``.

    Parameters
    ----------
    model : StructuredModel
        As :class:`StructuredSVM`.
    Cs : "auto" or sequence of float, default="auto"
        The grid of C, in the order given. ``"auto"``: :attr:`AUTO_C_GRIDS` of the
        regulariser (decades around the default ``C``; larger for the block norms, whose
        penalty is larger at equal C).
    regularizer, p, solver, scoring
        As :class:`StructuredSVM`. On the path, an ``eps`` left None is ``0.01 * C`` at each
        point, an ``eps`` given is absolute on ``F``; ``max_iter`` is per point,
        ``time_limit`` for the whole fit.
    validation_fraction : float, optional
        Share of the training examples (at least one) held out to choose C when ``fit`` is
        given no ``validation_data``. None: :data:`DEFAULT_VALIDATION_FRACTION` without
        ``validation_data``; giving both is refused.
    validation_seed : int, default=0
        Seed of the held-out examples.
    refit : bool, default=True
        After a grid scored on held-out examples, train again at ``C_`` on all of them.
    extend : int, default=2
        When the best validation score sits at the largest C of the grid (or the smallest),
        the path goes on past that edge by the grid's own ratio there (10 for 100, 1000,
        10000), each point warm-started and certified as the others, while the score keeps
        rising, for at most this many points
        (:class:`problems.model_selection.GridExtension`); 0 stops at the edge given, as
        scikit-learn's ``...CV`` estimators do. The solver's ``time_limit`` bounds it too.

    Attributes
    ----------
    C_ : float
        The C chosen on the validation examples (ties: the smaller C).
    path_ : dict of str to list
        One entry per C of the grid (``validation_score``: :meth:`StructuredSVM.score`).
    path_result_ : cutplane.PathResult or None
        The engine's path; None for SPOM.
    extended_ : {"above", "below"} or None
        Where the path went on past the grid (``path_["extension"]`` marks the points
        added); None when it did not.
    validation_ : dict
        ``source``, ``fraction``, ``seed``, ``n_examples``, ``metric``; after a refit,
        ``refit``, ``refit_seconds``, ``n_examples_refit``.
    coef_, result_, objective_, ...
        The model at ``C_``, as :class:`StructuredSVM`'s.
    """

    SINGLE = StructuredSVM
    MODEL_NAME = _CV_MODEL_NAME
    #: The grid ``Cs="auto"`` stands for, by regulariser.
    AUTO_C_GRIDS = {
        "ssvm": (0.1, 1.0, 10.0, 100.0),
        "mtl": (1.0, 10.0, 100.0, 1000.0),
        "pmtl": (1.0, 10.0, 100.0, 1000.0),
    }
    #: The declarative parameter table: :class:`StructuredSVM`'s without ``C``, with ``Cs`` and
    #: the validation parameters.
    PARAMETERS = {
        **{k: v for k, v in StructuredSVM.PARAMETERS.items() if k != "C"},
        **TemplateLearnerCVMixin.CV_PARAMETERS,
    }

    def __init__(
        self,
        model,
        *,
        Cs="auto",
        regularizer="ssvm",
        p=1.5,
        solver=None,
        scoring=None,
        validation_fraction=None,
        validation_seed=0,
        refit=True,
        extend=TemplateLearnerCVMixin.DEFAULT_EXTEND,
    ):
        self.model = model
        self.Cs = Cs
        self.regularizer = regularizer
        self.p = p
        self.solver = solver
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.validation_seed = validation_seed
        self.refit = refit
        self.extend = extend


def _check_structured_file(arrays, meta, path):
    """Consistency of a StructuredSVM file: the model entry, the scoring path, the group weights."""
    model = meta["model"]
    cls, params = model.get("class"), model.get("params")
    if not isinstance(cls, str) or ":" not in cls or not isinstance(params, dict):
        raise ModelFormatError("model must be {'class': 'module:qualname', 'params': {...}}", path=path, field="model")
    if not all(isinstance(a, str) for a in meta["active_templates"]):
        raise ModelFormatError("active_templates must be group names (str)", path=path, field="active_templates")
    if not all(json_type_ok(v, (float,)) for v in meta["template_weights"].values()):
        raise ModelFormatError("template_weights must map group names to numbers", path=path, field="template_weights")


_NUM = (float, type(None))
#: What a StructuredSVM / StructuredSVMCV model file must hold.
MODEL_SCHEMA = ModelSchema(
    arrays={"coef": ("f", 1)},
    meta={
        "model": (dict,),
        "scoring": (str, type(None)),
        "params": (dict,),
        "template_weights": (dict,),
        "active_templates": (list,),
        "objective": _NUM,
        "lower_bound": _NUM,
        "gap": _NUM,
        "n_iter": (int,),
    },
    params_of=(frozenset(StructuredSVM._get_param_names()) | frozenset(StructuredSVMCV._get_param_names()))
    - {"model", "scoring"},
    check=_check_structured_file,
    optional_meta=SELECTION_META,
)
