"""Sequence labelling by the 1-slack structural SVM, MTL^struct and pMTL^struct.

One estimator, three regularisers on the same templates, features and oracle, so the
methods compare like for like (Mao and Tsang 2013):

- ``"ssvm"``: ``Omega(w) = 1/2 ||w||^2``, the plain 1-slack structural SVM (SVM^hmm's model);
- ``"mtl"``: ``Omega(w) = 1/2 (sum_j ||w_j||)^2`` over template groups, the QCQP reduced
  problem (eq. 6) whose duals are the template weights ``mu`` (eq. 7);
- ``"pmtl"``: ``Omega(w) = 1/2 (sum_j ||w_j||^p)^(2/p)``, ``p > 1`` (eq. 10-13).

Two solvers minimise the same ``F`` with the same oracle: ``solver=CuttingPlane(...)`` (the
engine, certified gap; the default) and ``solver=SPOM(...)`` (the online proximal baseline of
Martins et al. 2011, :func:`cutplane.online.spom`, one sentence per round through
:class:`oracles.sequence_examples.SequenceExampleOracle`, no certificate); see
:mod:`problems.solvers`.

The objective is ``F(w) = Omega(w) + C * (1/n) sum_i max_y [Delta(y_i, y) + <w, dPhi_i(y)>]``
with the Hamming loss (SVM^hmm's ``C``); the engine minimises ``F / C`` (``lam = 1/C``) and
the reported objective, bounds and ``eps`` are on the scale of ``F``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from cutplane.exceptions import InputError, ModelFormatError
from problems.model_schemas import check_schema
from problems.model_selection import (
    cv_params_of_grid_file,
    is_single_C,
    load_selection,
    selection_meta,
)
from problems.sequence.feature_index import FeatureIndex, LabelAlphabet, SequenceFeatures
from problems.sequence.model_file import MODEL_SCHEMA as _MODEL_SCHEMA
from problems.sequence.model_file import check_corpus, decode, is_dict_index, read_model_parts
from problems.solvers import make_executor, params_from_meta, params_to_meta, release_executor
from problems.template_learning import TemplateLearnerCVMixin, TemplateLearnerMixin
from problems.validation import warn_unseen_labels

__all__ = ["SequenceTagger", "SequenceTaggerCV", "MODEL_SCHEMA"]

_MODEL_NAME = "SequenceTagger"
_CV_MODEL_NAME = "SequenceTaggerCV"


_check_corpus = check_corpus


def _feature_index(templates, X, min_count):
    """A :class:`FeatureIndex` of ``templates`` for token rows, a
    :class:`~problems.sequence.feature_dicts.DictFeatureIndex` for feature dicts (``templates`` None)."""
    from problems.sequence.feature_dicts import DictFeatureIndex, is_feature_dict_corpus

    if is_feature_dict_corpus(X):
        if templates is not None:
            raise InputError(
                "X holds feature dicts, which carry their own features: give templates=None (templates apply "
                "to token rows of columns)",
                field="templates",
            )
        return DictFeatureIndex(min_count=min_count)
    if templates is None:
        raise InputError(
            "templates=None needs feature dicts (X a list of sentences of dicts, as sklearn-crfsuite's); "
            "token rows of columns need CRF++ templates",
            field="templates",
        )
    return FeatureIndex(templates, min_count=min_count)


_is_dict_index = is_dict_index


class PreparedFeatures(NamedTuple):
    """A feature index and label set fitted on a corpus, with that corpus's features: what a CV
    path hands to the refit on the same corpus (which would otherwise extract them again).

    Attributes
    ----------
    index : FeatureIndex or DictFeatureIndex
    labels : LabelAlphabet
    min_count : int
    features : SequenceFeatures
        Of every sentence of the corpus, in its order.
    """

    index: Any
    labels: LabelAlphabet
    min_count: int
    features: SequenceFeatures


def _validation_pair(data):
    """``(X_dev, y_dev)`` of ``validation_data``."""
    if isinstance(data, (str, bytes)) or not isinstance(data, (tuple, list)) or len(data) != 2:
        raise InputError(
            "validation_data must be a pair (X_dev, y_dev) of sentences and label sequences, "
            f"got {type(data).__name__}",
            field="validation_data",
        )
    return data[0], data[1]


class SequenceTagger(TemplateLearnerMixin, BaseEstimator):
    """First-order chain tagger trained by cutting planes with a certified duality gap.

    Parameters
    ----------
    templates : str or None, default=None
        CRF++ template text (``U00:%x[-1,0]`` lines and ``B``; also unnamed and repeated
        templates, several ``B`` lines and input-conditioned bigrams such as ``B01:%x[0,1]``,
        which need the ``CuttingPlane`` solver); see
        :func:`problems.sequence.templates.parse_templates`. None for sklearn-crfsuite's input,
        where each token of ``X`` is a dict of features (:mod:`problems.sequence.feature_dicts`:
        each key a group, so ``template_weights_`` name the keys; the transitions are the group
        ``"B"``).
    C : float, default=10000.0
        Weight of the mean structured hinge loss (SVM^hmm's ``C``): ``fit`` trains one model
        at this C. The default is the C that the certified path chose on held-out data for
        MTL^struct, the default regulariser, on CoNLL-2000 chunking and CoNLL-2002 NER
        (``docs/results/default_models.md``). The structural SVM's penalty is smaller at equal
        C, so its best C is smaller: give ``C=1000.0`` with ``regularizer="ssvm"``
        (``docs/results/conll2000_chunking.md``, ``docs/results/conll2002_ner_table5a.md``).
        To choose C on held-out data, use :class:`SequenceTaggerCV` (a grid or ``"auto"``
        given here is refused). CRF++'s ``-c c`` weighs the *sum* of the sentences' losses
        against ``1/2 ||w||^2``, this C their *mean*: the same balance is ``C = n * c`` for ``n``
        training sentences (the user guide's "Coming from CRF++").
    regularizer : {"mtl", "ssvm", "pmtl"}, default="mtl"
    p : float, default=1.0
        Exponent of the p-block norm for ``regularizer="pmtl"`` (``p > 1``).
    min_count : int or "auto", default="auto"
        Drop features seen fewer times in training (CRF++'s ``-f``). ``"auto"``: 2 for
        ``"mtl"`` and ``"pmtl"``, 1 for ``"ssvm"``
        (:data:`problems.template_learning.DEFAULT_MIN_COUNTS`, with why).
    active_rtol : float, default=1e-5
        A template is active when its weight norm exceeds ``active_rtol`` times the largest.
    solver : CuttingPlane, SPOM or None, default=None
        How ``F`` is minimised (:mod:`problems.solvers`): :class:`~problems.solvers.CuttingPlane`
        (the engine: MTL^struct / SSVM / pMTL^struct by cutting planes, certified gap; its options
        ``eps``, ``max_iter``, ``time_limit``, ``max_cuts``, ``prune_after``, ``risk_floor_cut``,
        ``backend``, ``executor``, ``checkpoint``, ``memory_limit``, ...) or
        :class:`~problems.solvers.SPOM` (online proximal subgradient, Martins et al. 2011, Alg. 3, on the same
        regulariser and oracle: ``epochs``, ``eta0``, ``averaged``, ``seed``). None:
        ``CuttingPlane()``. An ``eps`` left None is ``0.01 * C`` on ``F``
        (:data:`DEFAULT_PATH_EPS` on the engine's scale, the tolerance of the measured default
        models) and a ``max_iter`` left None is :data:`DEFAULT_PATH_MAX_ITER`, as at each point
        of :class:`SequenceTaggerCV`'s path. Its options are reachable as
        ``solver__eps`` etc. through ``get_params`` / ``set_params``. ``risk_floor_cut`` adds the
        cut ``R(w) >= 0`` for ``regularizer="ssvm"`` too (``"mtl"`` and ``"pmtl"`` with
        ``p != 2`` always take it); ``docs/results/risk_floor_ab.md`` measures when it pays.

    Attributes
    ----------
    feature_index_ : FeatureIndex
    min_count_ : int
        The feature cutoff used (``min_count`` with ``"auto"`` resolved).
    labels_ : LabelAlphabet
    coef_ : ndarray of shape (dim,)
        ``w`` in the layout of :mod:`problems.sequence.feature_index` (unigram block, then transitions).
    template_weights_ : dict of str to float
        ``mu`` by template name: the QCQP duals (``"mtl"``), eq. (12) (``"pmtl"``), all 1 (``"ssvm"``).
    template_norms_ : dict of str to float
        ``||w_j||`` by template name.
    active_templates_ : list of str
        Templates whose weights are not zero (relative ``active_rtol``); only these are
        extracted at prediction time.
    n_active_templates_ : int
    objective_, lower_bound_, gap_ : float
        On the scale of ``F``; ``lower_bound_`` and ``gap_`` are None for a
        :class:`~problems.solvers.SPOM` solver (it certifies nothing).
    n_iter_ : int
        Engine iterations, or SPOM's completed epochs.
    result_ : cutplane.Result or cutplane.online.SPOMResult
        The solver's result (scale ``F / C``) with its history.
    solver_options_ : CuttingPlaneOptions or SPOMOptions
        The solver's checked options at ``fit`` (the defaults filled in).
    C_ : float
        The C of the model (``C``; for :class:`SequenceTaggerCV`, the one chosen on the
        validation data). The attributes above are those of the model at ``C_``.
    best_index_ : int
        Index of ``C_`` in ``path_``.
    path_ : dict of str to list
        One entry per C, in the order given (``pandas.DataFrame(est.path_)`` is the table; one
        row for a single C): ``C``, ``eps`` (on ``F``; None for SPOM), ``objective``,
        ``lower_bound``, ``gap`` (None for SPOM), ``status`` (``"not_run"`` where the time limit
        ran out first), ``n_iter``, ``seconds``, ``validation_score`` (in [0, 1]; None without
        validation data), ``n_active_templates``, ``active_templates``.
    path_result_ : cutplane.PathResult or None
        The engine's path (every point's result and history; the chosen point's ``w`` alone is
        kept, the others' are None) for a grid trained by ``CuttingPlane``; None otherwise.
    validation_ : dict or None
        The validation data used (None for a single C): ``source`` (``"data"`` or
        ``"fraction"``), ``fraction``, ``seed``, ``n_examples`` and ``metric``
        (``"chunk_f1"`` or ``"token_accuracy"``).
    """

    #: The declarative parameter table (checked at ``fit``; the solver checks its own).
    PARAMETERS = TemplateLearnerMixin.PARAMETERS
    CV_NAME = "SequenceTaggerCV"
    #: The ``estimator`` field of the model files.
    MODEL_NAME = _MODEL_NAME

    def __init__(
        self, templates=None, *, C=10000.0, regularizer="mtl", p=1.0, min_count="auto", active_rtol=1e-5, solver=None
    ):
        self.templates = templates
        self.C = C
        self.regularizer = regularizer
        self.p = p
        self.min_count = min_count
        self.active_rtol = active_rtol
        self.solver = solver

    def __sklearn_tags__(self):
        """scikit-learn's tags: the input is sentences (not a 2-d array) and ``fit`` needs labels."""
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = True
        return tags

    # ------------------------------------------------------------------ fitting
    def make_oracle(self, X, y, *, executor=None):
        """Fit the feature index and label set on ``(X, y)`` and return the 1-slack oracle.

        ``executor`` maps the oracle (:func:`cutplane.executors.get_executor`); None: the one
        the solver names (``solver.executor``), serial by default. A refit after a path
        (:func:`problems.model_selection.refit_at_chosen`) finds the path's feature index, label
        set and features of these sentences in ``_prepared`` (:class:`PreparedFeatures`) and
        uses them instead of extracting them again.
        """
        X, y = _check_corpus(X, y)
        prepared = getattr(self, "_prepared", None)  # the refit: the path's features of these sentences
        if prepared is not None and prepared.features.n_sentences == len(X):
            self.feature_index_, self.labels_, self.min_count_ = prepared.index, prepared.labels, prepared.min_count
            return self._oracle_of(prepared.features, y, executor)
        return self._oracle_of(self._fit_features(X, y), y, executor)

    def _fit_features(self, X, y):
        """Fit the feature index (``min_count_``, ``feature_index_``) and the label set
        (``labels_``) on ``(X, y)``; the features of ``X`` (:class:`SequenceFeatures`)."""
        self.min_count_ = self._resolved_min_count()
        self.feature_index_ = _feature_index(self.templates, X, self.min_count_)
        feats = self.feature_index_.fit_transform(X)
        self.labels_ = LabelAlphabet.fit(y)
        return feats

    def _oracle_of(self, feats, y, executor):
        """The 1-slack oracle of the features ``feats`` of sentences labelled ``y`` (the fitted
        label set's codes)."""
        from oracles.sequence import SequenceHingeOracle

        codes = self.labels_.encode_corpus(y)
        if executor is None:
            executor = make_executor(self._checked_solver())
        return SequenceHingeOracle(
            feats.indptr,
            feats.indices,
            feats.sentence_ptr,
            codes,
            feats.n_features,
            len(self.labels_),
            transitions=self.feature_index_.has_transitions,
            bigram_features=feats.bigram_features,
            values=feats.values,
            executor=executor,
        )

    def _path_oracle(self, X, y, keep, executor):
        """The oracle of the sentences ``keep`` of ``(X, y)`` for a path a refit on all of
        ``(X, y)`` follows: the feature index and label set are fitted on all the sentences
        (observations only; the refit's coordinates, for its warm start), their features
        extracted once, and the refit takes them (:class:`PreparedFeatures`) instead of
        extracting them again."""
        from problems.model_selection import take

        feats = self._fit_features(X, y)
        self._refit_features = PreparedFeatures(self.feature_index_, self.labels_, self.min_count_, feats)
        return self._oracle_of(feats.take(keep), take(y, keep), executor)

    def fit(self, X, y, *, callback=None):
        """Train one model at ``C`` on sentences ``X`` (lists of token rows of str, or of feature
        dicts with ``templates=None``) with label sequences ``y``.

        Parameters
        ----------
        X : list of list of tuple of str, or list of list of dict
            Token rows of columns (read by the templates) or, with ``templates=None``, per-token
            feature dicts (sklearn-crfsuite's input, :mod:`problems.sequence.feature_dicts`).
        y : list of list of str
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
            A bad parameter (a grid of C names :class:`SequenceTaggerCV`) or malformed data.
        """
        self._fit_one(X, y, callback=callback)
        self._warn_uncertified()
        return self

    def _fit_task(self, X, y, *, prm, options, plan, validation_data, callback):
        """Hold out the validation sentences of ``plan`` (or read ``validation_data``), build
        the oracle and train (:meth:`_train`); the executor is released."""
        from oracles.sequence_examples import SequenceExampleOracle
        from problems.model_selection import holdout_split, take

        X_val = y_val = oracle = None
        if plan.source == "fraction":
            X, y = _check_corpus(X, y)
            keep, held = holdout_split(len(X), plan.fraction, plan.seed, unit="sentences")
            if getattr(self, "_refit_follows", False):  # the refit's coordinates: its warm start
                oracle = self._path_oracle(X, y, keep, make_executor(options))
            X, y, X_val, y_val = take(X, keep), take(y, keep), take(X, held), take(y, held)
        elif plan.source == "data":
            X_val, y_val = _validation_pair(validation_data)
        if oracle is None:
            oracle = self.make_oracle(X, y, executor=make_executor(options))
        try:
            scorer = None if plan.source is None else self._validation_scorer(X_val, y_val, plan)
            self._train(
                oracle,
                lambda: SequenceExampleOracle(oracle),
                lambda: self.feature_index_.coordinate_groups(len(self.labels_)),  # made when needed (_train)
                self.feature_index_.template_names,
                prm=prm,
                options=options,
                scorer=scorer,
                callback=callback,
            )
        finally:
            release_executor(options, oracle.executor)  # worker pools / processes do not outlive fit

    def _validation_scorer(self, X_val, y_val, plan):
        """``scorer() -> float``: chunk F1 / 100 (BIO / IOB tag sets,
        :func:`problems.metrics.chunking.is_chunk_tagset`) or token accuracy / 100 of
        :meth:`predict` on the validation sentences; sets ``validation_``."""
        from problems.metrics.accuracy import token_accuracy
        from problems.metrics.chunking import chunk_f1, is_chunk_tagset

        X_val, y_val = _check_corpus(X_val, y_val, name="validation_data")
        warn_unseen_labels(y_val, self.labels_.labels, stacklevel=5)
        chunked = is_chunk_tagset(self.labels_.labels)
        self.validation_ = {
            "source": plan.source,
            "fraction": plan.fraction,
            "seed": plan.seed if plan.source == "fraction" else None,
            "n_examples": len(X_val),
            "metric": "chunk_f1" if chunked else "token_accuracy",
        }

        def scorer():
            pred = self.predict(X_val)
            return (chunk_f1(y_val, pred).f1 if chunked else token_accuracy(y_val, pred)) / 100.0

        return scorer

    # --------------------------------------------------------------- prediction
    def _check_fitted(self):
        check_is_fitted(self, "coef_")

    def predict(self, X, *, all_templates=False):
        """Label sequences (lists of str) by Viterbi; templates of zero weight are skipped
        unless ``all_templates`` (the predictions are identical: their weights are zero)."""
        self._check_fitted()
        return decode(self, X, all_templates=all_templates)

    def score(self, X, y):
        """Per-token accuracy (use :mod:`problems.metrics` for chunk F1 or segmentation F1)."""
        X, y = _check_corpus(X, y)
        self._check_fitted()
        warn_unseen_labels(y, self.labels_.labels)
        pred = self.predict(X)
        hits = sum(int(a == b) for ps, ys in zip(pred, y) for a, b in zip(ps, ys))
        return hits / sum(len(s) for s in y)

    # ------------------------------------------------------------------- models
    def save(self, path, *, extra_meta=None):
        """Write the model as npz + JSON metadata (never pickle); ``extra_meta`` adds JSON fields.

        A model fitted on feature dicts stores empty ``templates`` and a ``feature_dicts`` entry
        (the dict keys, in order, how numbers are read, ``"real"`` or ``"bins"``, and the numeric
        keys' bin edges), read back by :meth:`load`."""
        from problems.model_io import save_model

        self._check_fitted()
        idx = self.feature_index_
        dicts = _is_dict_index(idx)
        arrays = {
            "coef": self.coef_,
            "feature_names": np.array(idx.feature_names(), dtype=str),
            "feature_groups": idx.feature_groups_,
            "group_offsets": idx.group_offsets_,
            "labels": np.array(self.labels_.labels, dtype=str),
        }
        if idx.conditioned:  # input-conditioned bigram templates: their dictionary too
            arrays["bigram_feature_names"] = np.array(idx.bigram_feature_names(), dtype=str)
            arrays["bigram_feature_groups"] = idx.bigram_feature_groups_
        # how it ran (the solver's executor, Dask scheduler) is not part of the model
        params = params_to_meta(self, exclude=("templates",))
        meta = dict(extra_meta or {})
        meta.update(
            {
                "estimator": self.MODEL_NAME,
                "templates": "" if dicts else "\n".join(t.text for t in idx.templates),
                "params": params,
                "template_weights": self.template_weights_,
                "active_templates": self.active_templates_,
                "objective": self.objective_,
                "lower_bound": self.lower_bound_,
                "gap": self.gap_,
                "n_iter": self.n_iter_,
                **selection_meta(self),
            }
        )
        if dicts:  # the dict keys (the groups), how numbers read, the bin edges (exact floats in JSON)
            meta["feature_dicts"] = {
                "keys": list(idx.keys_),
                "numbers": idx.numbers,
                "numeric_edges": {k: [float(e) for e in v] for k, v in idx.numeric_edges_.items()},
            }
        return save_model(path, arrays, meta)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`; validated, never unpickled.

        Returns an estimator of the class that wrote the file, whichever of
        ``SequenceTagger.load`` / ``SequenceTaggerCV.load`` is called: a
        :class:`SequenceTaggerCV` for its files and for those of a ``SequenceTagger`` fitted on a
        grid of C before the CV estimator (``C`` a sequence or ``"auto"``: it becomes ``Cs``,
        with the stored ``C_``, ``path_`` and ``validation_``), else a :class:`SequenceTagger`.
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
        dicts = "feature_dicts" in meta  # fitted on feature dicts (templates=None)
        try:
            params, solver = params_from_meta(meta["params"], meta["format_version"])
            klass = SequenceTaggerCV if meta["estimator"] == _CV_MODEL_NAME else SequenceTagger
            if klass is SequenceTagger and "C" in params and not is_single_C(params["C"]):
                klass, params = SequenceTaggerCV, cv_params_of_grid_file(params, meta.get("validation"))
            est = klass(None if dicts else meta["templates"], solver=solver, **params)
            est.min_count_ = est._resolved_min_count()  # "auto" needs a valid regulariser
        except (InputError, TypeError) as exc:
            raise ModelFormatError(
                f"bad hyper-parameters (format_version {meta['format_version']}): {getattr(exc, 'message', exc)}",
                path=path,
                field="params",
            ) from None
        est.feature_index_, est.labels_, est.coef_ = read_model_parts(arrays, meta, path, est.min_count_)
        est.template_weights_ = dict(meta["template_weights"])
        est.active_templates_ = list(meta["active_templates"])
        est.n_active_templates_ = len(est.active_templates_)
        est.objective_, est.lower_bound_, est.gap_ = meta["objective"], meta["lower_bound"], meta["gap"]
        est.n_iter_ = meta["n_iter"]
        load_selection(est, meta, path)
        return est


class SequenceTaggerCV(TemplateLearnerCVMixin, SequenceTagger):
    """:class:`SequenceTagger` with C chosen on held-out data along a certified path (scikit-learn's
    ``LogisticRegressionCV`` convention).

    ``fit`` trains along the grid ``Cs`` (with :class:`~problems.solvers.CuttingPlane`, one
    :func:`cutplane.regularization_path`: each point warm-started from the cuts of the previous
    one and certified on its own; with :class:`~problems.solvers.SPOM`, once per C, cold),
    scores every point on the validation sentences (chunk F1 for BIO / IOB / IOBES tag sets,
    else token accuracy), keeps the best (``C_``, ``path_``) and, when the validation sentences
    were held out of the training ones, trains again at ``C_`` on all of them (``refit``). The
    fitted estimator is the model at ``C_``: it predicts, scores and saves as a
    :class:`SequenceTagger` does, with the same attributes.

    Parameters
    ----------
    templates : str or None, default=None
        CRF++ template text, or None for feature dicts (as :class:`SequenceTagger`).
    Cs : "auto" or sequence of float, default="auto"
        The grid of C, in the order given. ``"auto"``: the regulariser's grid
        (:data:`problems.template_learning.DEFAULT_C_GRIDS`; MTL^struct's best C is larger than
        the SSVM's, see ``docs/results/conll2000_chunking.md`` and
        ``docs/results/conll2002_ner_table5a.md``). One value trains that C alone (scored on the
        validation sentences, not refitted).
    regularizer, p, min_count, active_rtol
        As :class:`SequenceTagger`.
    solver : CuttingPlane, SPOM or None, default=None
        As :class:`SequenceTagger`. On the path, an ``eps`` left None is ``0.01 * C`` at each
        point (:data:`DEFAULT_PATH_EPS` on the engine's scale; an ``eps`` given is absolute on
        ``F`` at every point), ``max_iter`` is per point, ``time_limit`` for the whole fit
        (the refit included); a path refuses ``checkpoint``. SPOM's time limit is shared by its
        runs.
    validation_fraction : float, optional
        Share of the training sentences (whole sentences, at least one) held out to choose C
        when ``fit`` is given no ``validation_data``. None: :data:`DEFAULT_VALIDATION_FRACTION`
        without ``validation_data``; giving both is refused.
    validation_seed : int, default=0
        Seed of the held-out sentences (``np.random.default_rng(validation_seed)``).
    refit : bool, default=True
        After a grid scored on held-out sentences, train again at ``C_`` on all the training
        sentences (:func:`problems.model_selection.refit_at_chosen`, the tolerance of that
        point on the path), as scikit-learn's ``GridSearchCV(refit=True)``; False keeps the
        model trained without them.
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
        The C chosen on the validation sentences (ties: the smaller C).
    path_ : dict of str to list
        One entry per C of the grid (``validation_score`` in [0, 1]); see
        :class:`SequenceTagger`.
    path_result_ : cutplane.PathResult or None
        The engine's path (every point's result and history; the chosen point's ``w`` alone is
        kept, the others' are None); None for SPOM.
    extended_ : {"above", "below"} or None
        Where the path went on past the grid (``path_["extension"]`` marks the points
        added); None when it did not.
    validation_ : dict
        The validation data used (``source``, ``fraction``, ``seed``, ``n_examples``,
        ``metric``; after a refit, ``refit``, ``refit_seconds``, ``n_examples_refit``).
    coef_, template_weights_, result_, ...
        The model at ``C_``, as :class:`SequenceTagger`'s.

    Examples
    --------
    ``SequenceTaggerCV(templates, Cs=[100, 1000, 10000]).fit(X, y, validation_data=(X_dev, y_dev))``
    chooses C on a development set; ``SequenceTaggerCV(templates).fit(X, y)`` on 10% of the
    training sentences, then refits at ``C_`` on all of them.
    """

    SINGLE = SequenceTagger
    MODEL_NAME = _CV_MODEL_NAME
    #: The declarative parameter table (checked at ``fit``): the tagger's without ``C``, with
    #: ``Cs`` and the validation parameters.
    PARAMETERS = {
        **{k: v for k, v in SequenceTagger.PARAMETERS.items() if k != "C"},
        **TemplateLearnerCVMixin.CV_PARAMETERS,
    }

    def __init__(
        self,
        templates=None,
        *,
        Cs="auto",
        regularizer="mtl",
        p=1.0,
        min_count="auto",
        active_rtol=1e-5,
        solver=None,
        validation_fraction=None,
        validation_seed=0,
        refit=True,
        extend=TemplateLearnerCVMixin.DEFAULT_EXTEND,
    ):
        self.templates = templates
        self.Cs = Cs
        self.regularizer = regularizer
        self.p = p
        self.min_count = min_count
        self.active_rtol = active_rtol
        self.solver = solver
        self.validation_fraction = validation_fraction
        self.validation_seed = validation_seed
        self.refit = refit
        self.extend = extend


#: What a SequenceTagger model file must hold (defined beside the reader that needs no
#: scikit-learn, :mod:`problems.sequence.model_file`); the parameter names it lists are this
#: module's estimators' (a test checks them).
MODEL_SCHEMA = _MODEL_SCHEMA
