"""Arc-factored dependency parsing by the 1-slack structural SVM, MTL^parse and pMTL^parse.

One estimator, three regularisers on the same MSTParser-style arc templates, features and
oracle (Mao & Tsang, seed 004, sec. 3.1 and 3.4), as :class:`problems.SequenceTagger` does
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

Two solvers minimise the same ``F`` with the same decoder: ``solver="cutting-plane"`` (the
engine, certified gap) and ``solver="spom"`` (the online proximal baseline of Martins et al.,
seed 000 Alg. 3, one sentence per round, no certificate), as for the tagger
(:class:`~problems.template_learning.TemplateLearnerMixin`). SPOM reads each sentence through a
per-sentence view of the parse oracle (:class:`_ParseExamples`) that touches only the weights
of the features occurring on that sentence's arcs.

Templates are given as a dict ``name -> atoms`` (see :mod:`problems.parsing.features`), a list
of atom strings, or a template *text*: one template per line, ``name = atoms`` or just
``atoms`` (then also its name), ``#`` starts a comment (:func:`parse_arc_templates`).

:func:`parse_arc_templates` (re-exported here), the checks of sentences and gold trees and
:class:`_ParseExamples` live in the private module ``problems.parsing._data``.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator

from cutplane.exceptions import InputError, ModelFormatError

from problems.parsing._data import _check_sentences, _gold_trees, _ParseExamples, parse_arc_templates
from problems.estimator_options import make_executor, release_executor
from problems.template_learning import SOLVERS, TemplateLearnerMixin
from problems.validation import check_bool, check_choice

__all__ = ["DependencyParser", "parse_arc_templates"]

_MODEL_NAME = "DependencyParser"
_FZ_PREFIX = "fz_"


class DependencyParser(TemplateLearnerMixin, BaseEstimator):
    """Arc-factored dependency parser trained by cutting planes with a certified duality gap.

    Parameters
    ----------
    templates : dict, list of str, str or None, default=None
        Arc templates (see the module docstring); None: the built-in MSTParser-style set
        :data:`problems.parsing.features.DEFAULT_TEMPLATES` (24 templates).
    C : float, default=1.0
        Weight of the mean structured hinge loss.
    regularizer : {"mtl", "ssvm", "pmtl"}, default="mtl"
    p : float, default=1.0
        Exponent of the p-block norm for ``regularizer="pmtl"`` (``p > 1``).
    projective : bool, default=False
        Eisner (projective trees) instead of Chu-Liu-Edmonds, in training and prediction.
    single_root : bool, default=True
        Exactly one child of the root (Universal Dependencies); False for CoNLL-X style
        treebanks where the root may take several.
    eps : float, default=0.1
        Certified absolute tolerance on ``F`` (the engine gets ``eps / C``).
    max_iter : int, default=500
    time_limit : float, optional
        Wall-clock limit in seconds.
    min_count : int, default=1
        Drop features seen fewer times on the gold arcs of the training sentences.
    normalize_loss : bool, default=False
        Divide each sentence's loss by its number of words.
    pos : {"upos", "xpos"}, default="upos"
        The POS column the templates read.
    max_cuts : int, optional
        Working-set budget.
    prune_after : int, default=50
        Drop cuts idle that many iterations.
    risk_floor_cut : bool, default=False
        Cutting-plane solver: add the cut ``R(w) >= 0`` for ``regularizer="ssvm"`` too (``"mtl"``
        and ``"pmtl"`` with ``p != 2`` always take it); see :class:`problems.SequenceTagger`.
    executor : None, str or executor
        Map of the oracle (and of the decoder in :meth:`predict`) over chunks of sentences
        (``"threads"`` uses several cores; a name of :data:`cutplane.parallel.EXECUTORS`).
    n_workers : int, optional
    scheduler : str, optional
        Address of a Dask scheduler (``executor="dask"`` only).
    solver : {"cutting-plane", "spom"}, default="cutting-plane"
        The engine (MTL^parse / SSVM / pMTL^parse by cutting planes, certified gap) or SPOM
        (online proximal subgradient, seed 000 Alg. 3, same regulariser and decoder).
    backend : str, optional
        Reduced-problem backend of the cutting-plane solver (None: the engine's preference order).
    epochs : int, default=20
        SPOM: passes over the sentences.
    eta0 : float, optional
        SPOM: ``eta_t = eta0 / sqrt(t)``; None tunes it on a subsample
        (:func:`cutplane.online.learning_rates.tune_eta0`).
    averaged : bool, default=True
        SPOM: return the averaged model (else the last iterate).
    seed : int, default=0
        SPOM: seed of the epoch orders (``np.random.default_rng``).
    active_rtol : float, default=1e-5
        A template is active when its weight norm exceeds ``active_rtol`` times the largest.
    checkpoint : str or os.PathLike, optional
        Cutting-plane solver: file where the engine saves its state every ``checkpoint_every``
        iterations and on Ctrl-C / SIGTERM (:func:`cutplane.minimize`).
    checkpoint_every : int, default=10
    resume : bool, default=False
        Continue from ``checkpoint`` when it exists (same sentences, templates and
        hyper-parameters; anything else is refused).
    memory_limit : int, optional
        Bytes for the engine's working set (oldest cuts aggregated to stay within it). The
        checkpoint and memory options are refused with ``solver="spom"``.
    verbose : bool, default=False

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
        On the scale of ``F``; ``lower_bound_`` and ``gap_`` are None for ``solver="spom"``
        (it certifies nothing).
    n_iter_ : int
        Engine iterations, or SPOM's completed epochs.
    result_ : cutplane.Result or cutplane.online.SPOMResult
        The solver's result (scale ``F / C``) with its history.
    """

    def __init__(self, templates=None, *, C=1.0, regularizer="mtl", p=1.0, projective=False, single_root=True,
                 eps=0.1, max_iter=500, time_limit=None, min_count=1, normalize_loss=False, pos="upos",
                 max_cuts=None, prune_after=50, executor=None, n_workers=None, scheduler=None, solver="cutting-plane",
                 backend=None, epochs=20, eta0=None, averaged=True, seed=0, active_rtol=1e-5, checkpoint=None,
                 checkpoint_every=10, resume=False, memory_limit=None, risk_floor_cut=False, verbose=False):
        self.templates = templates
        self.C = C
        self.regularizer = regularizer
        self.p = p
        self.projective = projective
        self.single_root = single_root
        self.eps = eps
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.min_count = min_count
        self.normalize_loss = normalize_loss
        self.pos = pos
        self.max_cuts = max_cuts
        self.prune_after = prune_after
        self.risk_floor_cut = risk_floor_cut
        self.executor = executor
        self.n_workers = n_workers
        self.scheduler = scheduler
        self.solver = solver
        self.backend = backend
        self.epochs = epochs
        self.eta0 = eta0
        self.averaged = averaged
        self.seed = seed
        self.active_rtol = active_rtol
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.resume = resume
        self.memory_limit = memory_limit
        self.verbose = verbose

    # ------------------------------------------------------------------ fitting
    def _check_params(self):
        return dict(
            self._check_common_params(),
            **self._check_solver_params(),
            projective=check_bool(self.projective, "projective"),
            single_root=check_bool(self.single_root, "single_root"),
            normalize_loss=check_bool(self.normalize_loss, "normalize_loss"),
            pos=check_choice(self.pos, "pos", ("upos", "xpos")),
        )

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
            raise InputError(f"templates must be None, a dict, a list of atom strings or template text, "
                             f"got {type(self.templates).__name__}", field="templates") from None

    def make_oracle(self, sentences):
        """Fit the featurizer on ``sentences`` (gold arcs) and return the 1-slack oracle."""
        return self._make_oracle(sentences)[0]

    def _make_oracle(self, sentences):
        """The 1-slack oracle, the arc features and the gold trees (featurizer fitted)."""
        from oracles.parse_oracle import ParseOracle

        from problems.parsing.features import ArcFeaturizer

        prm = self._check_params()
        sentences = _check_sentences(sentences, need_heads=True)
        trees = _gold_trees(sentences, prm["single_root"])
        if prm["projective"]:
            from oracles.parsing import is_projective

            n_np = sum(not is_projective(t) for t in trees)
            if n_np:
                warnings.warn(f"{n_np} of {len(trees)} gold trees are not projective but projective=True: "
                              "their hinge terms can be negative and they cannot be parsed right",
                              UserWarning, stacklevel=3)
        self.featurizer_ = ArcFeaturizer(self._template_dict(), pos=prm["pos"], min_count=prm["min_count"])
        feats = self.featurizer_.fit_transform(sentences)
        oracle = ParseOracle(feats, trees, projective=prm["projective"], single_root=prm["single_root"],
                             normalize_loss=prm["normalize_loss"],
                             executor=make_executor(self))
        return oracle, feats, trees

    def fit(self, sentences, y=None, *, callback=None):
        """Train on sentences with gold heads (e.g. :func:`problems.io.conllu.read_conllu`).

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
        """
        prm = self._check_params()
        oracle, feats, trees = self._make_oracle(sentences)
        try:
            groups = self.featurizer_.coordinate_groups()
            names = self.featurizer_.template_names_
            n_groups = len(names)
            reg = self._make_regularizer(prm["regularizer"], prm["p"], groups, n_groups)
            C = prm["C"]
            if prm["solver"] == "spom":
                examples = _ParseExamples(feats, trees, projective=prm["projective"], single_root=prm["single_root"],
                                          normalize_loss=prm["normalize_loss"])
                self._run_spom(examples, oracle, reg, groups, n_groups, names, prm, callback)
                self._zero_inactive(groups, oracle, reg, C)
                return self
            self._run_cutting_plane(oracle, reg, groups, n_groups, names, prm, callback)
            self._zero_inactive(groups, oracle, reg, C)
        finally:
            release_executor(self, oracle.executor)  # worker pools / processes do not outlive fit
        self._warn_uncertified(prm)
        return self

    def _zero_inactive(self, groups, oracle, reg, C):
        """Set the weights of inactive templates to exactly zero, so that skipping them at
        prediction changes nothing, and re-certify: ``objective_`` becomes ``F`` at the
        thresholded weights (one more oracle call), ``gap_`` its distance to the lower bound."""
        names = self.featurizer_.template_names_
        inactive = np.array([nm not in set(self.active_templates_) for nm in names], dtype=bool)
        mask = inactive[groups]
        if not np.any(self.coef_[mask] != 0):
            return
        self.coef_[mask] = 0.0
        value = float(reg(self.coef_)) + C * float(oracle(self.coef_).value)
        self.objective_ = value
        if self.lower_bound_ is not None:
            self.gap_ = value - self.lower_bound_
        self.template_norms_.update({nm: 0.0 for nm, off in zip(names, inactive) if off})

    # --------------------------------------------------------------- prediction
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise InputError("this DependencyParser is not fitted yet; call fit first")

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
        sentences = _check_sentences(sentences, need_heads=False)
        fz, w = self.featurizer_, self.coef_
        if not all_templates and self.n_active_templates_ < len(fz.template_names_):
            fz = fz.restrict(self.active_templates_)
            w = self.coef_[fz.columns_]
        feats = fz.transform(sentences)
        executor = make_executor(self)
        try:
            trees = decode(feats, w, projective=bool(self.projective), single_root=bool(self.single_root),
                           executor=executor)
        finally:
            release_executor(self, executor)
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
        params = {k: v for k, v in self.get_params().items() if k not in ("templates", "executor", "scheduler")}
        params["checkpoint"] = None if self.checkpoint is None else str(self.checkpoint)
        meta = dict(extra_meta or {})
        meta.update({"estimator": _MODEL_NAME, "featurizer": fz_meta, "params": params,
                     "template_weights": self.template_weights_, "template_norms": self.template_norms_,
                     "active_templates": self.active_templates_, "objective": self.objective_,
                     "lower_bound": self.lower_bound_, "gap": self.gap_, "n_iter": self.n_iter_})
        return save_model(path, arrays, meta)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`; validated, never unpickled."""
        from problems.model_io import load_model
        from problems.parsing.features import ArcFeaturizer

        arrays, meta = load_model(path, estimator=_MODEL_NAME)
        try:
            fz_meta, params = meta["featurizer"], meta["params"]
            fz = ArcFeaturizer.from_state({k[len(_FZ_PREFIX):]: v for k, v in arrays.items()
                                           if k.startswith(_FZ_PREFIX)}, fz_meta, path=path)
            if params.get("solver") not in (None,) + SOLVERS:  # models saved when solver was the backend
                params["backend"] = params.pop("solver")
            params["solver"] = params.get("solver") or "cutting-plane"
            est = cls(fz.templates, **params)
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
        return est
