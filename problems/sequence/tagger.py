"""Sequence labelling by the 1-slack structural SVM, MTL^struct and pMTL^struct.

One estimator, three regularisers on the same templates, features and oracle, so the
methods compare like for like (Mao & Tsang, seed 004):

- ``"ssvm"``: ``Omega(w) = 1/2 ||w||^2``, the plain 1-slack structural SVM (SVM^hmm's model);
- ``"mtl"``: ``Omega(w) = 1/2 (sum_j ||w_j||)^2`` over template groups, the QCQP reduced
  problem (eq. 6) whose duals are the template weights ``mu`` (eq. 7);
- ``"pmtl"``: ``Omega(w) = 1/2 (sum_j ||w_j||^p)^(2/p)``, ``p > 1`` (eq. 10-13).

Two solvers minimise the same ``F`` with the same oracle: ``solver="cutting-plane"`` (the engine,
certified gap) and ``solver="spom"`` (the online proximal baseline of Martins et al., seed 000,
:func:`cutplane.online.spom`, one sentence per round, no certificate).

The objective is ``F(w) = Omega(w) + C * (1/n) sum_i max_y [Delta(y_i, y) + <w, dPhi_i(y)>]``
with the Hamming loss (SVM^hmm's ``C``); the engine minimises ``F / C`` (``lam = 1/C``) and
the reported objective, bounds and ``eps`` are on the scale of ``F``.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator

from cutplane.exceptions import InputError, ModelFormatError
from oracles.viterbi import viterbi_kernel

from problems.estimator_options import make_executor, release_executor
from problems.sequence.feature_index import FeatureIndex, LabelAlphabet
from problems.template_learning import TemplateLearnerMixin
from problems.validation import check_int, check_sequences, warn_unseen_labels

__all__ = ["SequenceTagger"]

_MODEL_NAME = "SequenceTagger"


def _check_corpus(X, y=None):
    """Sentences as lists of token rows (tuples of str) and, when given, matching label lists
    (:func:`problems.validation.check_sequences`: equal row widths, str cells, one label per token)."""
    return check_sequences(X, y)


@njit(cache=True)
def _chain_example(w_sup, uf, inv, indptr, t0, t1, labels, K, nW, with_trans):
    """Loss-augmented Viterbi on one sentence from the weights of its support, and the subgradient.

    ``w_sup`` holds ``W[uf[l], k]`` at ``l * K + k`` then the (K, K) transitions; ``inv[p]`` is the
    local id of the feature at position ``p`` of ``indices``. Returns the hinge value and the
    sorted global coordinates / values of ``Phi(x, y^) - Phi(x, y)``.
    """
    n = t1 - t0
    nf = uf.size
    unary = np.zeros((n, K))
    for t in range(n):
        for p in range(indptr[t0 + t], indptr[t0 + t + 1]):
            f = inv[p]
            for k in range(K):
                unary[t, k] += w_sup[f * K + k]
    trans_t = np.zeros((K, K))
    if with_trans:
        for a in range(K):
            for b in range(K):
                trans_t[b, a] = w_sup[nf * K + a * K + b]
    y = labels[t0:t1]
    yhat = np.empty(n, dtype=np.int32)
    viterbi_kernel(unary, trans_t, y, True, np.empty((n, K)), np.zeros((n, K), dtype=np.int32), yhat)
    acc = np.zeros(nf * K + K * K)
    value = 0.0
    for t in range(n):
        a, b = yhat[t], y[t]
        if a != b:
            value += 1.0 + unary[t, a] - unary[t, b]
            for p in range(indptr[t0 + t], indptr[t0 + t + 1]):
                acc[inv[p] * K + a] += 1.0
                acc[inv[p] * K + b] -= 1.0
        if with_trans and t > 0:
            pa, pb = yhat[t - 1], y[t - 1]
            value += trans_t[a, pa] - trans_t[b, pb]
            acc[nf * K + pa * K + a] += 1.0
            acc[nf * K + pb * K + b] -= 1.0
    nnz = 0
    for q in range(acc.size):
        if acc[q] != 0.0:
            nnz += 1
    idx = np.empty(nnz, dtype=np.int64)
    val = np.empty(nnz)
    j = 0
    for q in range(acc.size):
        if acc[q] != 0.0:
            idx[j] = uf[q // K] * K + q % K if q < nf * K else nW + (q - nf * K)
            val[j] = acc[q]
            j += 1
    return value, idx, val


class _SequenceExamples:
    """SPOM's per-example view of a :class:`~oracles.sequence.SequenceHingeOracle`.

    ``example_support(i)``: the coordinates sentence ``i`` reads (its distinct features times all
    labels, then the transition block); ``example_subgradient(i, w_support)``: loss-augmented
    Viterbi (the oracle's kernel) on those weights only, the hinge value and the sparse
    subgradient ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` -- the protocol of
    :mod:`cutplane.online.example_oracles`, with no O(dim) work per sentence. The distinct
    features of every sentence are found once here (one ``np.unique`` per sentence).
    """

    def __init__(self, oracle):
        self.oracle = oracle
        self.n_samples, self.dim = oracle.n_samples, oracle.dim
        self.K = oracle.n_labels
        self._nW = oracle.n_features * self.K
        self._trans = bool(oracle.transitions)
        self._labels = np.arange(self.K, dtype=np.int64)
        self._tcoords = self._nW + np.arange(self.K * self.K, dtype=np.int64)
        ufs, invs = [], []
        ip, sp_ = oracle.indptr, oracle.sentence_ptr
        for i in range(self.n_samples):
            uf, inv = np.unique(oracle.indices[ip[sp_[i]]:ip[sp_[i + 1]]], return_inverse=True)
            ufs.append(uf.astype(np.int64))
            invs.append(inv.astype(np.int32))
        self._uf_ptr = np.concatenate(([0], np.cumsum([u.size for u in ufs]))).astype(np.int64)
        self._uf = np.concatenate(ufs) if ufs else np.zeros(0, np.int64)
        self._inv = np.concatenate(invs) if invs else np.zeros(0, np.int32)  # aligned with oracle.indices

    def example_support(self, i):
        uf = self._uf[self._uf_ptr[i]:self._uf_ptr[i + 1]]
        coords = (uf[:, None] * self.K + self._labels).ravel()
        return np.concatenate([coords, self._tcoords]) if self._trans else coords

    def example_subgradient(self, i, w_support):
        from cutplane.online import ExampleSubgradient

        o = self.oracle
        value, idx, val = _chain_example(np.ascontiguousarray(w_support, dtype=np.float64),
                                         self._uf[self._uf_ptr[i]:self._uf_ptr[i + 1]], self._inv, o.indptr,
                                         int(o.sentence_ptr[i]), int(o.sentence_ptr[i + 1]), o.labels, self.K,
                                         self._nW, self._trans)
        return ExampleSubgradient(float(value), idx, val)


def _restricted_index(index: FeatureIndex, keep) -> FeatureIndex:
    """A view of a fitted index that extracts only the templates ``keep`` (same feature ids).

    Feature strings carry their template's name, so the full vocabulary maps the strings of
    the kept templates to the same ids; the others are never built.
    """
    sub = FeatureIndex([index.templates[j] for j in keep], min_count=index.min_count)
    sub.vocabulary_ = index.vocabulary_
    sub.n_features_ = index.n_features_
    return sub


class SequenceTagger(TemplateLearnerMixin, BaseEstimator):
    """First-order chain tagger trained by cutting planes with a certified duality gap.

    Parameters
    ----------
    templates : str
        CRF++ template text (``U00:%x[-1,0]`` lines and ``B``); see
        :func:`problems.sequence.templates.parse_templates`.
    C : float, default=1.0
        Weight of the mean structured hinge loss (SVM^hmm's ``C``).
    regularizer : {"mtl", "ssvm", "pmtl"}, default="mtl"
    p : float, default=1.0
        Exponent of the p-block norm for ``regularizer="pmtl"`` (``p > 1``).
    eps : float, default=0.1
        Certified absolute tolerance on ``F`` (the engine gets ``eps / C``).
    max_iter : int, default=500
    time_limit : float, optional
        Wall-clock limit in seconds.
    min_count : int, default=1
        Drop features seen fewer times in training (CRF++'s ``-f``).
    max_cuts : int, optional
        Working-set budget; ``prune_after``: drop cuts idle that many iterations.
    prune_after : int, default=50
    risk_floor_cut : bool, default=False
        Cutting-plane solver: add the cut ``R(w) >= 0`` (the structured hinge is non-negative)
        for ``regularizer="ssvm"`` too; ``"mtl"`` and ``"pmtl"`` with ``p != 2`` always take it.
        Measured both ways (``benchmarks/risk_floor_ab.py``, ``docs/results/risk_floor_ab.md``,
        Chinese segmentation and Spanish NER): with the cut the bounds are far tighter in the
        first hundreds of iterations, but wherever both runs certified, the run without it
        certified first (the same iterations at C = 100, 1.5-2x fewer at C = 1000), hence the
        default; the cut is for a tight ``max_iter`` or ``time_limit`` at large ``C``.
    executor : None, str or executor
        Map of the oracle over chunks of sentences (``"threads"`` uses both cores; a name of
        :data:`cutplane.parallel.EXECUTORS`).
    n_workers : int, optional
    scheduler : str, optional
        Address of a Dask scheduler (``executor="dask"`` only).
    solver : {"cutting-plane", "spom"}, default="cutting-plane"
        The engine (MTL^struct / SSVM / pMTL^struct by cutting planes, certified gap) or SPOM
        (online proximal subgradient, seed 000 Alg. 3, on the same regulariser and oracle).
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
        Continue from ``checkpoint`` when it exists (same data, templates and hyper-parameters).
    memory_limit : int, optional
        Bytes for the engine's working set (oldest cuts aggregated to stay within it). The
        checkpoint and memory options are refused with ``solver="spom"``.
    verbose : bool, default=False

    Attributes
    ----------
    feature_index_ : FeatureIndex
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
        On the scale of ``F``; ``lower_bound_`` and ``gap_`` are None for ``solver="spom"``
        (it certifies nothing).
    n_iter_ : int
        Engine iterations, or SPOM's completed epochs.
    result_ : cutplane.Result or cutplane.online.SPOMResult
        The solver's result (scale ``F / C``) with its history.
    """

    def __init__(self, templates, *, C=1.0, regularizer="mtl", p=1.0, eps=0.1, max_iter=500, time_limit=None,
                 min_count=1, max_cuts=None, prune_after=50, executor=None, n_workers=None, scheduler=None,
                 solver="cutting-plane", backend=None, epochs=20, eta0=None, averaged=True, seed=0,
                 active_rtol=1e-5, checkpoint=None, checkpoint_every=10, resume=False, memory_limit=None,
                 risk_floor_cut=False, verbose=False):
        self.templates = templates
        self.C = C
        self.regularizer = regularizer
        self.p = p
        self.eps = eps
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.min_count = min_count
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
        return dict(self._check_common_params(), **self._check_solver_params())

    def make_oracle(self, X, y):
        """Fit the feature index and label set on ``(X, y)`` and return the 1-slack oracle."""
        from oracles.sequence import SequenceHingeOracle

        X, y = _check_corpus(X, y)
        self.feature_index_ = FeatureIndex(self.templates, min_count=check_int(self.min_count, "min_count"))
        feats = self.feature_index_.fit_transform(X)
        self.labels_ = LabelAlphabet.fit(y)
        codes = self.labels_.encode_corpus(y)
        return SequenceHingeOracle(feats.indptr, feats.indices, feats.sentence_ptr, codes,
                                   feats.n_features, len(self.labels_), transitions=self.feature_index_.has_transitions,
                                   executor=make_executor(self))

    def fit(self, X, y, *, callback=None):
        """Train on sentences ``X`` (lists of token rows of str) with label sequences ``y``.

        ``callback`` is passed to the solver: ``callback(IterationInfo)`` per engine
        iteration, ``callback(SPOMInfo)`` per SPOM evaluation (objectives on the scale
        ``F / C``); returning True stops.
        """
        prm = self._check_params()
        oracle = self.make_oracle(X, y)
        try:
            n_labels = len(self.labels_)
            groups = self.feature_index_.coordinate_groups(n_labels)
            names = self.feature_index_.template_names
            n_groups = len(self.feature_index_.templates)
            reg = self._make_regularizer(prm["regularizer"], prm["p"], groups, n_groups)
            if prm["solver"] == "spom":
                self._run_spom(_SequenceExamples(oracle), oracle, reg, groups, n_groups, names, prm, callback)
                return self
            self._run_cutting_plane(oracle, reg, groups, n_groups, names, prm, callback)
        finally:
            release_executor(self, oracle.executor)  # worker pools / processes do not outlive fit
        self._warn_uncertified(prm)
        return self

    # --------------------------------------------------------------- prediction
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise InputError("this SequenceTagger is not fitted yet; call fit first")

    def predict(self, X, *, all_templates=False):
        """Label sequences (lists of str) by Viterbi; templates of zero weight are skipped
        unless ``all_templates`` (the predictions are identical: their weights are zero)."""
        from oracles.sequence import viterbi_decode

        self._check_fitted()
        X, _ = _check_corpus(X)
        index = self.feature_index_
        if not all_templates:
            active = set(self.active_templates_)
            keep = [j for j, t in enumerate(index.templates) if t.name in active or t.kind == "B"]
            index = _restricted_index(index, keep)
        feats = index.transform(X)
        codes = viterbi_decode(self.coef_, feats.indptr, feats.indices, feats.sentence_ptr, feats.n_features,
                               len(self.labels_), transitions=self.feature_index_.has_transitions)
        out, ptr = [], feats.sentence_ptr
        for i in range(len(X)):
            out.append(self.labels_.decode(codes[ptr[i]:ptr[i + 1]]))
        return out

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
        """Write the model as npz + JSON metadata (never pickle); ``extra_meta`` adds JSON fields."""
        from problems.model_io import save_model

        self._check_fitted()
        idx = self.feature_index_
        arrays = {
            "coef": self.coef_, "feature_names": np.array(idx.feature_names(), dtype=str),
            "feature_groups": idx.feature_groups_, "group_offsets": idx.group_offsets_,
            "labels": np.array(self.labels_.labels, dtype=str),
        }
        # how it ran (executor, Dask scheduler) is not part of the model
        params = {k: v for k, v in self.get_params().items() if k not in ("templates", "executor", "scheduler")}
        params["checkpoint"] = None if self.checkpoint is None else str(self.checkpoint)
        meta = dict(extra_meta or {})
        meta.update({"estimator": _MODEL_NAME, "templates": "\n".join(t.text for t in idx.templates),
                "params": params,
                "template_weights": self.template_weights_, "active_templates": self.active_templates_,
                "objective": self.objective_, "lower_bound": self.lower_bound_, "gap": self.gap_,
                "n_iter": self.n_iter_})
        return save_model(path, arrays, meta)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`; validated, never unpickled."""
        from problems.model_io import load_model

        arrays, meta = load_model(path, estimator=_MODEL_NAME)
        est = cls(meta["templates"], **meta["params"])
        idx = FeatureIndex(meta["templates"], min_count=est.min_count)
        names = [str(s) for s in arrays["feature_names"]]
        idx.vocabulary_ = {s: k for k, s in enumerate(names)}
        idx.n_features_ = len(names)
        idx.feature_groups_ = np.asarray(arrays["feature_groups"], dtype=np.int32)
        idx.group_offsets_ = np.asarray(arrays["group_offsets"], dtype=np.int64)
        est.feature_index_ = idx
        est.labels_ = LabelAlphabet([str(s) for s in arrays["labels"]])
        est.coef_ = np.asarray(arrays["coef"], dtype=np.float64)
        if est.coef_.shape != (idx.dim(len(est.labels_)),):
            raise ModelFormatError(f"coef has shape {est.coef_.shape}, expected ({idx.dim(len(est.labels_))},)",
                                   path=path, field="coef")
        est.template_weights_ = dict(meta["template_weights"])
        est.active_templates_ = list(meta["active_templates"])
        est.n_active_templates_ = len(est.active_templates_)
        est.objective_, est.lower_bound_, est.gap_ = meta["objective"], meta["lower_bound"], meta["gap"]
        est.n_iter_ = meta["n_iter"]
        return est
