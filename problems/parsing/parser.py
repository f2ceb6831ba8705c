"""Arc-factored dependency parsing by the 1-slack structural SVM, MTL^parse and pMTL^parse.

One estimator, three regularisers on the same MSTParser-style arc templates, features and
oracle (Mao and Tsang 2013, sec. 3.1 and 3.4), as :class:`problems.SequenceTagger` does
for chains:

- ``"ssvm"``: ``Omega(w) = 1/2 ||w||^2``, the plain 1-slack structural SVM;
- ``"mtl"``: ``Omega(w) = 1/2 (sum_j ||w_j||)^2`` over the arc templates (MTL^parse), the
  QCQP reduced problem whose duals are the template weights ``mu`` (eq. 6-7);
- ``"pmtl"``: ``Omega(w) = 1/2 (sum_j ||w_j||^p)^(2/p)``, ``p > 1``.

The objective is ``F(w) = Omega(w) + C * (1/n) sum_i max_y [Delta(y_i, y) + <w, Phi(x_i, y) -
Phi(x_i, y_i)>]`` with ``Delta`` the number of words with a wrong head (divided by the
sentence length with ``normalize_loss=True``); the argmax runs over all trees by
Chu-Liu-Edmonds, or over projective trees by Eisner (``projective=True``), with exactly one
child of the root when ``single_root`` (UD). The engine minimises ``F / C`` (``lam = 1/C``);
the reported objective, bounds and ``eps`` are on the scale of ``F``.

The decoder is a parameter object, :class:`TreeDecoder` (``projective``, ``single_root``):
it fixes the set of trees the argmax runs over, in training and prediction alike.

Two solvers minimise the same ``F`` with the same decoder: ``solver=CuttingPlane(...)`` (the
engine, certified gap; the default) and ``solver=SPOM(...)`` (the online proximal baseline of
Martins et al. 2011, Alg. 3, one sentence per round, no certificate), as for the tagger
(:class:`~problems.template_learning.TemplateLearnerMixin`, :mod:`problems.solvers`). SPOM
reads each sentence through :class:`oracles.parse_examples.ParseExampleOracle`, which touches
only the weights of the features occurring on that sentence's arcs.

Templates are given as a dict ``name -> atoms`` (see :mod:`problems.parsing.features`), a list
of atom strings, or a template *text*: one template per line, ``name = atoms`` or just
``atoms`` (then also its name), ``#`` starts a comment (:func:`parse_arc_templates`, defined
in :mod:`problems.parsing.features` and re-exported here).
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from cutplane.exceptions import InputError, ModelFormatError
from problems.model_schemas import ModelSchema, check_schema
from problems.model_selection import (
    SELECTION_META,
    cv_params_of_grid_file,
    is_single_C,
    load_selection,
    selection_meta,
)
from problems.parsing.features import parse_arc_templates
from problems.solvers import (
    LEGACY_SOLVER_KEYS,
    OptionSet,
    Param,
    check_params,
    make_executor,
    params_from_meta,
    params_to_meta,
    release_executor,
)
from problems.template_learning import TemplateLearnerCVMixin, TemplateLearnerMixin
from problems.validation import check_bool, check_choice

__all__ = ["DependencyParser", "DependencyParserCV", "TreeDecoder", "parse_arc_templates", "MODEL_SCHEMA"]

_MODEL_NAME = "DependencyParser"
_CV_MODEL_NAME = "DependencyParserCV"
_FZ_PREFIX = "fz_"


class TreeDecoder(OptionSet):
    """The trees a :class:`DependencyParser` decodes over, in training and prediction.

    Parameters
    ----------
    projective : bool, default=False
        Eisner (projective trees) instead of Chu-Liu-Edmonds (all trees).
    single_root : bool, default=True
        Exactly one child of the root (Universal Dependencies); False for CoNLL-X style
        treebanks where the root may take several.
    """

    #: The declarative parameter table (checked at the parser's ``fit`` / ``predict``).
    PARAMETERS: ClassVar[dict] = {
        "projective": Param(check_bool, "Eisner (projective) instead of Chu-Liu-Edmonds"),
        "single_root": Param(check_bool, "exactly one child of the root"),
    }

    def __init__(self, *, projective=False, single_root=True):
        self.projective = projective
        self.single_root = single_root

    def checked(self) -> dict:
        """``{"projective": bool, "single_root": bool}``, validated (InputError names a bad one)."""
        return check_params(self, self.PARAMETERS)


def _checked_decoder(decoder) -> dict:
    decoder = TreeDecoder() if decoder is None else decoder
    if not isinstance(decoder, TreeDecoder):
        raise InputError(
            f"decoder must be a TreeDecoder(projective=..., single_root=...) or None, got {type(decoder).__name__}",
            field="decoder",
        )
    return decoder.checked()


def _check_sentences(sentences, *, need_heads):
    """A non-empty list of sentences with forms/lemmas/upos/xpos (and gold heads)."""
    if isinstance(sentences, (str, bytes)) or not hasattr(sentences, "__len__"):
        raise InputError("sentences must be a list of ConlluSentence-like objects", field="sentences")
    sentences = list(sentences)
    if not sentences:
        raise InputError("no sentences: need at least one", field="sentences")
    for i, s in enumerate(sentences):
        for col in ("forms", "lemmas", "upos", "xpos"):
            if not hasattr(s, col):
                raise InputError(f"sentence {i} has no {col!r} column", field="sentences")
        if len(s.forms) == 0:
            raise InputError(f"sentence {i} has no words", field="sentences")
        if need_heads and getattr(s, "heads", None) is None:
            raise InputError(
                f"sentence {i} has no gold heads",
                field="heads",
                path=getattr(s, "path", None),
                line=getattr(s, "line", None) or None,
            )
    return sentences


def _gold_trees(sentences, single_root):
    """Gold trees (shape (n+1,), -1 first), checked to be trees (single-rooted if required)."""
    from oracles.parsing import check_heads, is_tree

    trees = []
    for i, s in enumerate(sentences):
        n = len(s.forms)
        h = np.concatenate(([-1], np.asarray(s.heads)))
        where = dict(path=getattr(s, "path", None), line=getattr(s, "line", None) or None)
        try:
            h = check_heads(h, n + 1)
        except InputError as exc:
            raise InputError(f"sentence {i}: {exc.message}", field="heads", **where) from None
        if not is_tree(h):
            raise InputError(f"sentence {i}: the gold heads are not a tree rooted at 0", field="heads", **where)
        if single_root and int(np.sum(h[1:] == 0)) != 1:
            raise InputError(
                f"sentence {i}: the root has {int(np.sum(h[1:] == 0))} children but "
                "single_root=True; use single_root=False for multi-rooted treebanks",
                field="heads",
                **where,
            )
        trees.append(h)
    return trees


class DependencyParser(TemplateLearnerMixin, BaseEstimator):
    """Arc-factored dependency parser trained by cutting planes with a certified duality gap.

    Parameters
    ----------
    templates : dict, list of str, str or None, default=None
        Arc templates (see the module docstring); None: the built-in MSTParser-style set
        :data:`problems.parsing.features.DEFAULT_TEMPLATES` (24 templates).
    C : float, default=1000.0
        Weight of the mean structured hinge loss: ``fit`` trains one model at this C. The
        default is the C that the certified path chose on held-out trees for MTL^parse, the
        default regulariser, on UD Danish-DDT (``docs/results/default_models.md``); the SSVM's
        UAS there is flat from C = 30 to 3000 (``docs/results/danish_parsing.md``). To choose C
        on held-out data, use :class:`DependencyParserCV` (a grid or ``"auto"`` given here is
        refused).
    regularizer : {"mtl", "ssvm", "pmtl"}, default="mtl"
    p : float, default=1.0
        Exponent of the p-block norm for ``regularizer="pmtl"`` (``p > 1``).
    decoder : TreeDecoder or None, default=None
        The trees decoded over (:class:`TreeDecoder`: ``projective``, ``single_root``); None:
        ``TreeDecoder()``, Chu-Liu-Edmonds with exactly one child of the root. Its options are
        reachable as ``decoder__projective`` etc.
    normalize_loss : bool, default=False
        Divide each sentence's loss by its number of words.
    pos : {"upos", "xpos"}, default="upos"
        The POS column the templates read.
    min_count : int or "auto", default=1
        Drop features seen fewer times on the gold arcs of the training sentences. ``"auto"``:
        :data:`problems.template_learning.DEFAULT_MIN_COUNTS` of the regulariser (the tagger's
        default; the parser keeps 1 until the cutoff is measured on parsing).
    active_rtol : float, default=1e-5
        A template is active when its weight norm exceeds ``active_rtol`` times the largest.
    solver : CuttingPlane, SPOM or None, default=None
        How ``F`` is minimised (:mod:`problems.solvers`): :class:`~problems.solvers.CuttingPlane`
        (the engine: MTL^parse / SSVM / pMTL^parse by cutting planes, certified gap) or
        :class:`~problems.solvers.SPOM` (online proximal subgradient, Martins et al. 2011, Alg. 3, same
        regulariser and decoder). None: ``CuttingPlane()``; an ``eps`` left None is ``0.01 * C``
        on ``F`` and a ``max_iter`` left None 1000, as for :class:`problems.SequenceTagger`.
        The solver's ``executor`` also maps the decoder in :meth:`predict`. Its options are
        reachable as ``solver__eps`` etc.; see :class:`problems.SequenceTagger` for
        ``risk_floor_cut``.

    Attributes
    ----------
    featurizer_ : problems.parsing.features.ArcFeaturizer
    coef_ : ndarray of shape (dim,)
        ``w``, grouped by template (``featurizer_.coordinate_groups()``).
    template_weights_ : dict of str to float
        ``mu`` by template name: the QCQP duals (``"mtl"``), eq. (12) (``"pmtl"``), all 1 (``"ssvm"``).
    template_norms_ : dict of str to float
        ``||w_j||`` by template name.
    active_templates_ : list of str
        Templates with non-zero weights (relative ``active_rtol``); only these are
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
        The C of the model (``C``; for :class:`DependencyParserCV`, the one chosen on the
        validation trees); the attributes above are those of the model at ``C_``.
    best_index_ : int
        Index of ``C_`` in ``path_``.
    path_ : dict of str to list
        One entry per C in the order given, as for :class:`problems.SequenceTagger`
        (``validation_score``: UAS in [0, 1]).
    path_result_ : cutplane.PathResult or None
        The engine's path for a grid trained by ``CuttingPlane``; None otherwise.
    validation_ : dict or None
        The validation data used (``source``, ``fraction``, ``seed``, ``n_examples``,
        ``metric="uas"``); None for a single C.
    """

    #: The declarative parameter table (checked at ``fit``; the decoder and the solver check
    #: their own).
    PARAMETERS: ClassVar[dict] = {
        **TemplateLearnerMixin.PARAMETERS,
        "normalize_loss": Param(check_bool, "loss per word"),
        "pos": Param(lambda v, n: check_choice(v, n, ("upos", "xpos")), "POS column"),
    }
    CV_NAME = "DependencyParserCV"
    #: The ``estimator`` field of the model files.
    MODEL_NAME = _MODEL_NAME

    def __init__(
        self,
        templates=None,
        *,
        C=1000.0,
        regularizer="mtl",
        p=1.0,
        decoder=None,
        normalize_loss=False,
        pos="upos",
        min_count=1,
        active_rtol=1e-5,
        solver=None,
    ):
        self.templates = templates
        self.C = C
        self.regularizer = regularizer
        self.p = p
        self.decoder = decoder
        self.normalize_loss = normalize_loss
        self.pos = pos
        self.min_count = min_count
        self.active_rtol = active_rtol
        self.solver = solver

    def __sklearn_tags__(self):
        """scikit-learn's tags: the input is sentences (not a 2-d array) holding their gold heads
        (``fit`` and ``score`` take no separate ``y``)."""
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = False
        return tags

    # ------------------------------------------------------------------ fitting
    def _template_dict(self):
        if self.templates is None:
            from problems.parsing.features import DEFAULT_TEMPLATES

            return dict(DEFAULT_TEMPLATES)
        if isinstance(self.templates, str):
            return parse_arc_templates(self.templates)
        if isinstance(self.templates, dict):
            return dict(self.templates)
        try:
            return {str(t): str(t) for t in self.templates}
        except TypeError:
            raise InputError(
                f"templates must be None, a dict, a list of atom strings or template text, "
                f"got {type(self.templates).__name__}",
                field="templates",
            ) from None

    def make_oracle(self, sentences, *, executor=None):
        """Fit the featurizer on ``sentences`` (gold arcs) and return the 1-slack oracle.

        ``executor`` maps the oracle; None: the one the solver names (serial by default).
        """
        return self._make_oracle(sentences, executor=executor)[0]

    def _make_oracle(self, sentences, *, executor=None):
        """The 1-slack oracle, the arc features and the gold trees (featurizer fitted)."""
        from oracles.parse_oracle import ParseOracle
        from problems.parsing.features import ArcFeaturizer

        prm = self._checked_params()
        dec = _checked_decoder(self.decoder)
        sentences = _check_sentences(sentences, need_heads=True)
        trees = _gold_trees(sentences, dec["single_root"])
        if dec["projective"]:
            from oracles.parsing import is_projective

            n_np = sum(not is_projective(t) for t in trees)
            if n_np:
                warnings.warn(
                    f"{n_np} of {len(trees)} gold trees are not projective but projective=True: "
                    "their hinge terms can be negative and they cannot be parsed right",
                    UserWarning,
                    stacklevel=3,
                )
        self.featurizer_ = ArcFeaturizer(self._template_dict(), pos=prm["pos"], min_count=prm["min_count"])
        feats = self.featurizer_.fit_transform(sentences)
        if executor is None:
            executor = make_executor(self._checked_solver())
        oracle = ParseOracle(
            feats,
            trees,
            projective=dec["projective"],
            single_root=dec["single_root"],
            normalize_loss=prm["normalize_loss"],
            executor=executor,
        )
        return oracle, feats, trees

    def fit(self, sentences, y=None, *, callback=None):
        """Train one model at ``C`` on sentences with gold heads (e.g.
        :func:`problems.io.conllu.read_conllu`).

        Parameters
        ----------
        sentences : list of ConlluSentence
            Objects with ``forms``, ``lemmas``, ``upos``, ``xpos`` and ``heads`` (shape (n,),
            0 = root) forming a tree.
        y : ignored
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
            A bad parameter (a grid of C names :class:`DependencyParserCV`) or sentences
            without gold heads or not forming trees.
        """
        self._fit_one(sentences, y, callback=callback)
        self._warn_uncertified()
        return self

    def _fit_task(self, sentences, y, *, prm, options, plan, validation_data, callback):
        """Hold out the validation trees of ``plan`` (or read ``validation_data``), build the
        oracle, train (:meth:`_train`) and zero the inactive templates; the executor is
        released."""
        from oracles.parse_examples import ParseExampleOracle
        from problems.model_selection import holdout_split, take

        dec = _checked_decoder(self.decoder)
        val = None
        if plan.source == "fraction":
            sentences = _check_sentences(sentences, need_heads=True)
            _gold_trees(sentences, dec["single_root"])  # bad trees are named before the split
            keep, held = holdout_split(len(sentences), plan.fraction, plan.seed, unit="trees")
            sentences, val = take(sentences, keep), take(sentences, held)
        elif plan.source == "data":
            val = validation_data
            if isinstance(val, tuple) and len(val) == 2 and (val[1] is None or isinstance(val[0], (list, tuple))):
                val = val[0]  # (X_dev, y_dev): y is ignored, as in fit
        oracle, feats, trees = self._make_oracle(sentences, executor=make_executor(options))
        try:
            groups = self.featurizer_.coordinate_groups()

            def examples():
                return ParseExampleOracle(
                    feats,
                    trees,
                    projective=dec["projective"],
                    single_root=dec["single_root"],
                    normalize_loss=prm["normalize_loss"],
                )

            scorer = None if plan.source is None else self._validation_scorer(val, plan)
            reg = self._train(
                oracle,
                examples,
                groups,
                self.featurizer_.template_names_,
                prm=prm,
                options=options,
                scorer=scorer,
                callback=callback,
            )
            self._zero_inactive(groups, oracle, reg, self.C_)
            for key, value in (("objective", self.objective_), ("gap", self.gap_)):
                self.path_[key][self.best_index_] = None if value is None else float(value)
        finally:
            release_executor(options, oracle.executor)  # worker pools / processes do not outlive fit

    def _validation_scorer(self, val, plan):
        """``scorer() -> float``: UAS without punctuation of :meth:`predict` on the validation
        trees; sets ``validation_``."""
        try:
            val = _check_sentences(val, need_heads=True)
        except InputError as exc:
            raise InputError(f"validation_data: {exc.message}", field="validation_data") from None
        self.validation_ = {
            "source": plan.source,
            "fraction": plan.fraction,
            "seed": plan.seed if plan.source == "fraction" else None,
            "n_examples": len(val),
            "metric": "uas",
        }
        return lambda: float(self.attachment_scores(val).uas)

    def _zero_inactive(self, groups, oracle, reg, C):
        """Set the weights of inactive templates to exactly zero, so that skipping them at
        prediction changes nothing, and re-certify: ``objective_`` becomes ``F`` at the
        thresholded weights (one more oracle call), ``gap_`` its distance to the lower bound."""
        names = self.featurizer_.template_names_
        inactive = np.array([nm not in set(self.active_templates_) for nm in names], dtype=bool)
        mask = inactive[groups]
        if not np.any(self.coef_[mask] != 0):
            return
        self.coef_ = np.where(mask, 0.0, self.coef_)  # a new array: result_.w stays the certified point
        value = float(reg(self.coef_)) + C * float(oracle(self.coef_).value)
        self.objective_ = value
        if self.lower_bound_ is not None:
            self.gap_ = value - self.lower_bound_
        self.template_norms_.update({nm: 0.0 for nm, off in zip(names, inactive) if off})

    # --------------------------------------------------------------- prediction
    def _check_fitted(self):
        check_is_fitted(self, "coef_")

    def predict(self, sentences, *, all_templates=False):
        """Best tree of every sentence.

        Templates of zero weight are not extracted unless ``all_templates`` (the predictions
        are identical: their weights are zero).

        Parameters
        ----------
        sentences : list of ConlluSentence
            Heads are not needed.
        all_templates : bool, default=False

        Returns
        -------
        heads : list of ndarray of shape (n_i,), int64
            ``heads[i][k]`` is the head of word ``k + 1`` (0 = root), the CoNLL-U convention.
        """
        from oracles.parse_oracle import decode

        self._check_fitted()
        dec = _checked_decoder(self.decoder)
        options = self._checked_solver()
        sentences = _check_sentences(sentences, need_heads=False)
        fz, w = self.featurizer_, self.coef_
        if not all_templates and self.n_active_templates_ < len(fz.template_names_):
            fz = fz.restrict(self.active_templates_)
            w = self.coef_[fz.columns_]
        feats = fz.transform(sentences)
        executor = make_executor(options)
        try:
            trees = decode(feats, w, projective=dec["projective"], single_root=dec["single_root"], executor=executor)
        finally:
            release_executor(options, executor)
        return [t[1:].astype(np.int64) for t in trees]

    def attachment_scores(self, sentences):
        """UAS with and without punctuation and complete-sentence accuracy on gold sentences.

        Returns
        -------
        problems.metrics.parsing.AttachmentScores
        """
        from problems.metrics.parsing import uas

        sentences = _check_sentences(sentences, need_heads=True)
        return uas(sentences, self.predict(sentences))

    def score(self, sentences, y=None):
        """Unlabelled attachment score without punctuation (UPOS ``PUNCT``), in [0, 1]."""
        return float(self.attachment_scores(sentences).uas)

    # ------------------------------------------------------------------- models
    def save(self, path, *, extra_meta=None):
        """Write the model as npz + JSON metadata (never pickle); ``extra_meta`` adds JSON fields."""
        from problems.model_io import save_model

        self._check_fitted()
        fz_arrays, fz_meta = self.featurizer_.get_state()
        arrays = {"coef": self.coef_, **{_FZ_PREFIX + k: v for k, v in fz_arrays.items()}}
        params = params_to_meta(self, exclude=("templates",))
        meta = dict(extra_meta or {})
        meta.update(
            {
                "estimator": self.MODEL_NAME,
                "featurizer": fz_meta,
                "params": params,
                "template_weights": self.template_weights_,
                "template_norms": self.template_norms_,
                "active_templates": self.active_templates_,
                "objective": self.objective_,
                "lower_bound": self.lower_bound_,
                "gap": self.gap_,
                "n_iter": self.n_iter_,
                **selection_meta(self),
            }
        )
        return save_model(path, arrays, meta)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`; validated, never unpickled.

        Returns an estimator of the class that wrote the file, whichever of
        ``DependencyParser.load`` / ``DependencyParserCV.load`` is called: a
        :class:`DependencyParserCV` for its files and for those of a ``DependencyParser`` fitted
        on a grid of C before the CV estimator (``C`` a sequence or ``"auto"``: it becomes
        ``Cs``, with the stored ``C_``, ``path_`` and ``validation_``), else a
        :class:`DependencyParser`.
        """
        from problems.model_io import load_model
        from problems.parsing.features import ArcFeaturizer

        arrays, meta = load_model(path)
        if meta["estimator"] not in (_MODEL_NAME, _CV_MODEL_NAME):
            raise ModelFormatError(
                f"the file holds a {meta['estimator'][:80]} model, expected {_MODEL_NAME} or {_CV_MODEL_NAME}",
                path=path,
                field="estimator",
            )
        check_schema(MODEL_SCHEMA, arrays, meta, path)
        try:
            fz_meta = meta["featurizer"]
            fz = ArcFeaturizer.from_state(
                {k[len(_FZ_PREFIX) :]: v for k, v in arrays.items() if k.startswith(_FZ_PREFIX)}, fz_meta, path=path
            )
            try:
                params, solver = params_from_meta(meta["params"], meta["format_version"])
                if meta["format_version"] < 2:  # the decoder's options were keywords of the parser
                    params["decoder"] = {k: params.pop(k) for k in ("projective", "single_root") if k in params}
                decoder = params.pop("decoder", None)
                decoder = None if decoder is None else TreeDecoder(**decoder)
                klass = DependencyParserCV if meta["estimator"] == _CV_MODEL_NAME else DependencyParser
                if klass is DependencyParser and "C" in params and not is_single_C(params["C"]):
                    klass, params = DependencyParserCV, cv_params_of_grid_file(params, meta.get("validation"))
                est = klass(fz.templates, decoder=decoder, solver=solver, **params)
            except (InputError, TypeError) as exc:
                raise ModelFormatError(
                    f"bad hyper-parameters (format_version {meta['format_version']}): {getattr(exc, 'message', exc)}",
                    path=path,
                    field="params",
                ) from None
            names = fz.template_names_
            est.template_weights_ = {str(k): float(meta["template_weights"][k]) for k in names}
            est.template_norms_ = {str(k): float(meta["template_norms"][k]) for k in names}
            active = [str(a) for a in meta["active_templates"]]
            scalars = [None if meta[k] is None else float(meta[k]) for k in ("objective", "lower_bound", "gap")]
            n_iter = int(meta["n_iter"])
        except ModelFormatError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"model metadata is incomplete or malformed: {exc!r}", path=path) from None
        if not set(active) <= set(names):
            raise ModelFormatError("active templates not among the templates", path=path, field="active_templates")
        coef = np.asarray(arrays["coef"], dtype=np.float64)
        if coef.shape != (fz.dim_,):
            raise ModelFormatError(f"coef has shape {coef.shape}, expected ({fz.dim_},)", path=path, field="coef")
        est.featurizer_ = fz
        est.coef_ = coef
        est.active_templates_ = active
        est.n_active_templates_ = len(active)
        est.objective_, est.lower_bound_, est.gap_ = scalars
        est.n_iter_ = n_iter
        load_selection(est, meta, path)
        return est


class DependencyParserCV(TemplateLearnerCVMixin, DependencyParser):
    """:class:`DependencyParser` with C chosen on held-out trees along a certified path
    (scikit-learn's ``LogisticRegressionCV`` convention).

    ``fit(sentences, y=None, *, validation_data=None, callback=None)`` trains along the grid
    ``Cs`` (with :class:`~problems.solvers.CuttingPlane`, one
    :func:`cutplane.regularization_path`, each point warm-started from the cuts of the previous
    one and certified on its own; with :class:`~problems.solvers.SPOM`, once per C, cold),
    scores every point by UAS without punctuation on the validation trees, keeps the best
    (``C_``, ``path_``) and, when the validation trees were held out of the training ones,
    trains again at ``C_`` on all of them (``refit``). The fitted estimator is the model at
    ``C_``: it predicts, scores and saves as a :class:`DependencyParser` does, with the same
    attributes.

    Parameters
    ----------
    templates : dict, list of str, str or None, default=None
        As :class:`DependencyParser`.
    Cs : "auto" or sequence of float, default="auto"
        The grid of C, in the order given. ``"auto"``: the regulariser's grid
        (:data:`problems.template_learning.DEFAULT_C_GRIDS`; see
        ``docs/results/danish_parsing.md`` for why MTL^parse's best C is larger than the
        SSVM's). One value trains that C alone (scored on the validation trees, not refitted).
    regularizer, p, decoder, normalize_loss, pos, min_count, active_rtol
        As :class:`DependencyParser`.
    solver : CuttingPlane, SPOM or None, default=None
        As :class:`DependencyParser`; on the path as :class:`problems.SequenceTaggerCV`
        (``eps`` and ``max_iter`` per point, ``time_limit`` for the whole fit).
    validation_fraction : float, optional
        Share of the training trees (whole trees, at least one) held out to choose C when
        ``fit`` is given no ``validation_data`` (sentences with gold heads, or a pair
        ``(sentences, None)``). None: :data:`DEFAULT_VALIDATION_FRACTION` without
        ``validation_data``; giving both is refused.
    validation_seed : int, default=0
        Seed of the held-out trees (``np.random.default_rng(validation_seed)``).
    refit : bool, default=True
        After a grid scored on held-out trees, train again at ``C_`` on all the training
        trees (:func:`problems.model_selection.refit_at_chosen`), as scikit-learn's
        ``GridSearchCV(refit=True)``; False keeps the model trained without them.
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
        The C chosen on the validation trees (ties: the smaller C).
    path_ : dict of str to list
        One entry per C of the grid (``validation_score``: UAS in [0, 1]).
    path_result_ : cutplane.PathResult or None
        The engine's path; None for SPOM.
    extended_ : {"above", "below"} or None
        Where the path went on past the grid (``path_["extension"]`` marks the points
        added); None when it did not.
    validation_ : dict
        The validation data used (``source``, ``fraction``, ``seed``, ``n_examples``,
        ``metric="uas"``; after a refit, ``refit``, ``refit_seconds``, ``n_examples_refit``).
    coef_, template_weights_, result_, ...
        The model at ``C_``, as :class:`DependencyParser`'s.
    """

    SINGLE = DependencyParser
    MODEL_NAME = _CV_MODEL_NAME
    #: The declarative parameter table (checked at ``fit``): the parser's without ``C``, with
    #: ``Cs`` and the validation parameters.
    PARAMETERS: ClassVar[dict] = {
        **{k: v for k, v in DependencyParser.PARAMETERS.items() if k != "C"},
        **TemplateLearnerCVMixin.CV_PARAMETERS,
    }

    def __init__(
        self,
        templates=None,
        *,
        Cs="auto",
        regularizer="mtl",
        p=1.0,
        decoder=None,
        normalize_loss=False,
        pos="upos",
        min_count=1,
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
        self.decoder = decoder
        self.normalize_loss = normalize_loss
        self.pos = pos
        self.min_count = min_count
        self.active_rtol = active_rtol
        self.solver = solver
        self.validation_fraction = validation_fraction
        self.validation_seed = validation_seed
        self.refit = refit
        self.extend = extend


_NUM = (float, type(None))
#: What a DependencyParser model file must hold (passed to :func:`problems.model_io.load_model`);
#: ``params`` may hold the solver and decoder options of format-version-1 files too.
MODEL_SCHEMA = ModelSchema(
    arrays={"coef": ("f", 1)},
    meta={
        "featurizer": (dict,),
        "params": (dict,),
        "template_weights": (dict,),
        "template_norms": (dict,),
        "active_templates": (list,),
        "objective": _NUM,
        "lower_bound": _NUM,
        "gap": _NUM,
        "n_iter": (int,),
    },
    params_of=frozenset(DependencyParser._get_param_names())
    | frozenset(DependencyParserCV._get_param_names())
    | LEGACY_SOLVER_KEYS
    | {"projective", "single_root"},
    optional_meta=SELECTION_META,
)
