"""Your own structured model: the :class:`StructuredModel` contract and its adapter :class:`StructuredOracle`.

A structured problem is a model, as in SVM^struct (Tsochantaridis et al. 2005; Joachims, Finley
and Yu 2009): a joint feature map ``Phi(x, y)`` of length ``dim``, a loss ``Delta(y, y^)`` and
the loss-augmented argmax

    y^_i = argmax_y  Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>

(the most violated output, Mao and Tsang 2013, eq. 9). A user subclasses
:class:`StructuredModel` (plain Python, numpy or numba) and gives it to
:class:`StructuredOracle` with the data; the oracle then gives every consumer of the package
what it takes:

- ``oracle(w)``: the 1-slack cut of the risk
  ``R(w) = (1/n) sum_i max_y [Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>]``
  (:class:`cutplane.protocols.Oracle`; BMRM, LS-BMRM, MTL^struct's and pMTL^struct's mixed norms);
- ``oracle.example_cuts(w)``: one cut per example (the n-slack method,
  :class:`cutplane.protocols.ExampleCutsOracle`);
- ``oracle.cached_cut(w)``: the cut from each example's recent outputs (the constraint cache,
  :class:`cutplane.protocols.CachingOracle`);
- ``oracle.example_oracles()``: the per-example oracle of SPOM
  (:class:`cutplane.protocols.ExampleOracle`).

Per training example, the oracle answers the names the built-in structured oracles share
(example index first): ``example_loss_augmented_argmax(i, w)``, ``example_argmax(i, w)``,
``example_joint_feature(i, y)``, ``example_loss(i, y)``
(:class:`oracles.sequence.SequenceHingeOracle` and
:class:`oracles.dense_sequence.DenseSequenceOracle` answer all four,
:class:`oracles.parse_oracle.ParseOracle` the first).

The examples are split into chunks, each a picklable
:class:`~oracles.structured_chunk.StructuredChunk` holding the model and its slice of the data,
mapped by an executor (serial, threads, processes, Dask: :mod:`cutplane.executors`). A processes
or Dask executor pickles the model: its class must be importable on the workers (defined in a
module, not in ``__main__`` or a function).

Sparse joint features stay sparse: the cuts' slopes are CSR rows with the nonzeros of
``sum_i dPhi_i``; a model whose joint features are dense arrays gives dense 1-slack slopes.

Honest certificates: every answer of the model is checked (a joint feature of the wrong length or
not finite, a negative or non-finite loss, ``loss(y, y) != 0``, a loss-augmented argmax whose
output is worse than the truth), each with one :class:`~cutplane.exceptions.InputError` naming the
model's class and method. A model that declares ``approximate = True`` may return such an output:
it is replaced by the truth (margin 0), and the oracle's results say ``exact=False`` (the engine
then warns and its certificate is relative to the approximation: each cut is still a minorant of
the risk, but the value at the query point may be below ``R(w)``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cutplane.cuts import CachedCut, Cut, ExampleCuts, OracleResult, coordinate_dtype
from cutplane.exceptions import InputError
from cutplane.executors import bind_tasks, chunk_bounds, default_n_chunks, get_executor
from cutplane.points import checked_point

from .structured_chunk import ModelChecks, PredictTask, StructuredChunk, as_dense, same_output, sum_rows
from .structured_examples import StructuredExampleOracle

__all__ = [
    "StructuredModel",
    "StructuredOracle",
    "StructuredExampleOracle",
    "same_output",
    "batch_forms",
    "BATCH_FORMS",
]


def _score(phi, w) -> float:
    """``<w, phi>`` for a dense or sparse joint feature."""
    if sp.issparse(phi):
        return float((phi @ w).sum())
    return float(np.dot(np.asarray(phi, dtype=np.float64).ravel(), w))


class StructuredModel:
    """The contract of a user's structured model, with documented defaults.

    Subclass it and set ``dim`` (for example in ``__init__``); implement :meth:`joint_feature`,
    and :meth:`loss_augmented_argmax` and :meth:`argmax` unless the model's outputs can be
    enumerated (then define ``outputs(x)`` and the defaults enumerate them). The methods may be
    plain Python, numpy or numba. A processes or Dask executor pickles the model: define its class
    in an importable module.

    Attributes
    ----------
    dim : int
        Length of the joint feature (a plain attribute the subclass sets).
    groups : ndarray of int of shape (dim,) or None
        The feature group of every coordinate, for MTL^struct's and pMTL^struct's template
        weighting (``cutplane.regularizers.MixedNorm(groups, p)``); None: no groups.
    approximate : bool
        True when :meth:`argmax` / :meth:`loss_augmented_argmax` may be approximate (a relaxation,
        a greedy search): an output worse than the truth is then replaced by the truth instead of
        refused, and the oracle's certificates say ``exact=False``.

    Notes
    -----
    Optional methods:

    ``outputs(x)``
        An iterable of every output of input ``x`` (small output spaces): the defaults of
        :meth:`argmax` and :meth:`loss_augmented_argmax` enumerate it, and so do the tests'
        brute force checks.
    :meth:`batch_argmax`, :meth:`batch_loss_augmented_argmax`
        Many examples in one call (a vectorised or compiled argmax); the defaults loop.
    :meth:`batch_joint_feature`, :meth:`batch_loss`
        The joint features (one CSR matrix or ndarray, a row per example) and the losses (an
        ndarray) of many examples in one call; the defaults loop. A model that overrides either
        is read by :class:`StructuredOracle`'s vectorised path: per call one batch argmax, one
        batch of joint features and one of losses for the outputs that differ from the truth,
        with every check made on the arrays. The per-example methods stay the contract: the
        batch forms must give the same answers (the oracle compares the two joint features on
        the first example). A compiled batch model against the built-in sequence oracle:
        ``docs/results/structured_chain.md``.
    """

    dim: int
    groups: np.ndarray | None = None
    approximate: bool = False

    def joint_feature(self, x, y):
        """``Phi(x, y)``: ndarray of shape (dim,) or a scipy sparse row of shape (1, dim). Required."""
        raise NotImplementedError(
            f"{type(self).__name__}.joint_feature(x, y) is required: return Phi(x, y) as an ndarray of shape "
            "(dim,) or a scipy sparse row of shape (1, dim)"
        )

    def _enumerate(self, method, x):
        outputs = getattr(self, "outputs", None)
        if outputs is None:
            raise NotImplementedError(
                f"{type(self).__name__}.{method} is not implemented and the model defines no outputs(x) to "
                f"enumerate: implement {method}"
            )
        return outputs(x)

    def argmax(self, x, w):
        """The prediction ``argmax_y <w, Phi(x, y)>``.

        Default: the first best of ``self.outputs(x)`` when the model defines ``outputs``.

        Parameters
        ----------
        x : object
            An input.
        w : ndarray of shape (dim,)
            The weights (read-only).
        """
        best, best_score = None, -np.inf
        for y in self._enumerate("argmax", x):
            s = _score(self.joint_feature(x, y), w)
            if best is None or s > best_score:
                best, best_score = y, s
        return best

    def loss(self, y, y_hat) -> float:
        """``Delta(y, y_hat) >= 0``, with ``Delta(y, y) = 0``.

        Default: for array-like outputs of equal shape (ndarray, list, tuple of numbers), the
        Hamming count (number of differing entries); otherwise 0/1 (0 when the outputs are equal,
        :func:`~oracles.structured_chunk.same_output`).
        """
        try:
            a, b = np.asarray(y), np.asarray(y_hat)
        except (TypeError, ValueError):  # ragged outputs: not arrays
            return 0.0 if same_output(y, y_hat) else 1.0
        if a.ndim >= 1 and a.shape == b.shape and a.dtype != object and b.dtype != object:
            return float(np.count_nonzero(a != b))
        return 0.0 if same_output(y, y_hat) else 1.0

    def loss_augmented_argmax(self, x, y, w):
        """The most violated output ``argmax_y' Delta(y, y') + <w, Phi(x, y')>``.

        Default: the first best of ``self.outputs(x)`` when the model defines ``outputs``;
        otherwise a :class:`NotImplementedError` naming this method.

        Parameters
        ----------
        x : object
            An input.
        y : object
            Its true output.
        w : ndarray of shape (dim,)
            The weights (read-only).
        """
        best, best_score = None, -np.inf
        for y_hat in self._enumerate("loss_augmented_argmax", x):
            s = float(self.loss(y, y_hat)) + _score(self.joint_feature(x, y_hat), w)
            if best is None or s > best_score:
                best, best_score = y_hat, s
        return best

    def batch_argmax(self, X, w) -> list:
        """:meth:`argmax` of every input of the list ``X`` (override for a vectorised argmax)."""
        return [self.argmax(x, w) for x in X]

    def batch_loss_augmented_argmax(self, X, Y, w) -> list:
        """:meth:`loss_augmented_argmax` of every example of the lists ``X``, ``Y`` (override for
        a vectorised argmax)."""
        return [self.loss_augmented_argmax(x, y, w) for x, y in zip(X, Y)]

    def batch_joint_feature(self, X, Y):
        """:meth:`joint_feature` of every pair of the lists ``X``, ``Y`` as one matrix (override
        for vectorised or compiled features).

        Returns
        -------
        scipy.sparse.csr_matrix or ndarray of shape (len(X), dim)
            Row ``j`` is ``Phi(X[j], Y[j])``. The default stacks the per-example features: an
            ndarray when every one is dense, else a CSR matrix.
        """
        rows = [self.joint_feature(x, y) for x, y in zip(X, Y)]
        if not any(sp.issparse(r) for r in rows):
            return np.array([np.asarray(r, dtype=np.float64).ravel() for r in rows]).reshape(len(rows), self.dim)
        return sp.vstack([sp.csr_matrix(r.reshape(1, -1)) for r in rows], format="csr")

    def batch_joint_feature_difference(self, X, Y, Y_hat):
        """``Phi(X[j], Y_hat[j]) - Phi(X[j], Y[j])`` of every triple of the lists, as one matrix
        (override when the difference is cheaper than the two joint features: for a chain, only
        the positions where the labels differ).

        Returns
        -------
        scipy.sparse.csr_matrix or ndarray of shape (len(X), dim)
            Row ``j`` is the difference. The default subtracts two :meth:`batch_joint_feature`
            calls. :class:`StructuredOracle` calls an override in place of the joint features of
            the outputs, and (with ``check``) compares its first answer with theirs.
        """
        a, b = self.batch_joint_feature(X, Y_hat), self.batch_joint_feature(X, Y)
        if sp.issparse(a) or sp.issparse(b):
            return sp.csr_matrix(a) - sp.csr_matrix(b)
        return np.asarray(a) - np.asarray(b)

    def batch_loss(self, Y, Y_hat) -> np.ndarray:
        """:meth:`loss` of every pair of the lists ``Y``, ``Y_hat`` as an ndarray of shape
        (len(Y),) (override for a vectorised loss)."""
        return np.array([float(self.loss(y, yh)) for y, yh in zip(Y, Y_hat)], dtype=np.float64)


#: The batch forms a model may give for :class:`StructuredOracle`'s vectorised path.
BATCH_FORMS = ("batch_joint_feature", "batch_joint_feature_difference", "batch_loss")


def batch_forms(model) -> frozenset:
    """The batch forms (:data:`BATCH_FORMS`) that ``model`` gives itself: those it defines other
    than :class:`StructuredModel`'s looping defaults."""
    given = set()
    for name in BATCH_FORMS:
        method = getattr(type(model), name, None)
        if callable(method) and method is not getattr(StructuredModel, name):
            given.add(name)
    return frozenset(given)


def _model_dim(model) -> int:
    name = type(model).__name__
    try:
        dim = model.dim
    except AttributeError:
        raise InputError(f"{name} has no attribute dim (the length of its joint feature)", field="dim") from None
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise InputError(f"{name}.dim must be an integer >= 1, got {dim!r}", field="dim")
    return int(dim)


def _model_groups(model, dim):
    groups = getattr(model, "groups", None)
    if groups is None:
        return None
    g = np.asarray(groups)
    name = type(model).__name__
    if g.shape != (dim,) or (g.size and not np.issubdtype(g.dtype, np.integer)) or (g.size and g.min() < 0):
        raise InputError(
            f"{name}.groups must be non-negative integers of shape ({dim},), got shape {g.shape} dtype {g.dtype}",
            field="groups",
        )
    return g.astype(np.int64)


class StructuredOracle:
    """Every oracle the solvers take, from a :class:`StructuredModel` and its data.

    Parameters
    ----------
    model : StructuredModel
        The user's model (any object with the contract's ``dim`` and methods).
    X, Y : sequence
        Inputs and true outputs, ``n_samples`` of each (lists of any objects).
    executor : None, str or executor, default=None
        Map over chunks of examples (:func:`cutplane.executors.get_executor`); serial by default.
        The processes and Dask executors pickle the model (its class must be importable).
    n_chunks : int, optional
        Number of chunks; default :func:`cutplane.executors.default_n_chunks` of the executor.
    cache_size : int, default=0
        Outputs kept per example for :meth:`cached_cut` (the last ``cache_size`` distinct
        loss-augmented outputs; 0: none). With a cache, every exact call also checks that the
        model's argmax is at least as violated as the cached outputs.
    check : bool, default=True
        Check every answer of the model: joint features (length, finite), losses (finite,
        ``>= 0``, 0 at the truth) and the argmax against the cache. ``check=False`` skips these
        per-call checks for speed once a model is trusted (construction still checks the first
        example). The test of a loss-augmented output against the truth is always made (it costs
        nothing): an output worse than the truth raises, or for an ``approximate`` model is
        replaced by the truth.
    batch : bool or None, default=None
        Take the vectorised path (:class:`~oracles.structured_chunk.StructuredChunk`): the
        truth's joint features held as one CSR matrix, per call one batch of joint features and
        of losses for the outputs that differ from the truth, the checks on the arrays. None:
        when the model gives ``batch_joint_feature`` or ``batch_loss``; True: always (built on
        the looping defaults otherwise); False: the per-example path. Both give the same cuts,
        rows and errors.

    Attributes
    ----------
    model : StructuredModel
    dim : int
        ``model.dim``.
    n_samples : int
    groups : ndarray of int of shape (dim,) or None
        ``model.groups``, checked.
    exact : bool
        ``not model.approximate``: whether the oracle's values are the risk (else lower estimates
        of it, with valid cuts).
    risk_lower_bound : float
        0 (the truth is among the outputs: every hinge term is ``>= 0``;
        :class:`cutplane.protocols.RiskFloorOracle`).
    example_lower_bound : float
        0 (the n-slack floor, :class:`cutplane.protocols.ExampleCutsOracle`).
    n_replaced : int
        Outputs of an approximate model replaced by a better one so far.
    batch_forms : frozenset of str
        The batch forms the model gives (:func:`batch_forms`).
    vectorised : bool
        Whether the chunks take the vectorised path (``batch``).
    executor : executor

    Examples
    --------
    >>> import numpy as np
    >>> class Binary(StructuredModel):
    ...     dim = 2
    ...     def joint_feature(self, x, y):
    ...         return y * np.asarray(x, dtype=float) / 2.0
    ...     def outputs(self, x):
    ...         return (-1, 1)
    >>> oracle = StructuredOracle(Binary(), [[1.0, 0.0], [0.0, 1.0]], [1, -1])
    >>> res = oracle(np.zeros(2))
    >>> res.value, res.argmax
    (1.0, [-1, 1])
    """

    risk_lower_bound = 0.0
    example_lower_bound = 0.0

    def __init__(self, model, X, Y, *, executor=None, n_chunks=None, cache_size=0, check=True, batch=None):
        self.model = model
        self.dim = _model_dim(model)
        self.groups = _model_groups(model, self.dim)
        X, Y = list(X), list(Y)
        if len(X) != len(Y):
            raise InputError(f"X has {len(X)} inputs but Y has {len(Y)} outputs", field="Y")
        if not X:
            raise InputError("need at least one example", field="X")
        if isinstance(cache_size, bool) or not isinstance(cache_size, (int, np.integer)) or cache_size < 0:
            raise InputError(f"cache_size must be an integer >= 0, got {cache_size!r}", field="cache_size")
        self.X, self.Y = X, Y
        self.n_samples = len(X)
        self.cache_size = int(cache_size)
        self.check = bool(check)
        self.exact = not bool(getattr(model, "approximate", False))
        self.n_replaced = 0
        if batch is not None and not isinstance(batch, (bool, np.bool_)):
            raise InputError(f"batch must be True, False or None, got {batch!r}", field="batch")
        self.batch_forms = batch_forms(model)
        self.vectorised = bool(self.batch_forms) if batch is None else bool(batch)
        first = StructuredChunk(model, X[:1], Y[:1], 0, dim=self.dim, check=True)
        phi = first.truth_feature(0)  # the contract, checked early on the first example
        if self.vectorised:
            self._check_batch_forms(phi, X[:1], Y[:1])
        self.executor = get_executor(executor)
        if n_chunks is None:
            n_chunks = default_n_chunks(self.executor)
        if isinstance(n_chunks, bool) or not isinstance(n_chunks, (int, np.integer)) or n_chunks < 1:
            raise InputError(f"n_chunks must be an integer >= 1, got {n_chunks!r}", field="n_chunks")
        self.chunks = chunk_bounds(self.n_samples, int(n_chunks))
        self.tasks = self._new_tasks()
        self._bound = None

    def _check_batch_forms(self, phi, X, Y) -> None:
        """The batch forms on the first example: checked as every call checks them, and the batch
        joint feature equal to :meth:`StructuredModel.joint_feature`'s."""
        first = StructuredChunk(
            self.model, X, Y, 0, dim=self.dim, check=True, vectorised=True, batch_forms=self.batch_forms
        )
        rows = first.truth_rows()
        if "batch_joint_feature" in self.batch_forms:
            one = np.asarray(rows.toarray()).ravel()
            ref = as_dense(phi)
            if not np.allclose(one, ref, rtol=1e-12, atol=1e-12):
                raise InputError(
                    f"{type(self.model).__name__}.batch_joint_feature (example 0): differs from joint_feature "
                    f"(largest difference {float(np.max(np.abs(one - ref))):.6g}); the batch form must give the "
                    "per-example answers",
                    field="batch_joint_feature",
                )
        if "batch_joint_feature_difference" in self.batch_forms:  # the truth against itself: a zero row
            diff, _ = first.checks.batch_differences(X, Y, Y, np.zeros(1, dtype=np.int64))
            if diff.nnz:
                raise InputError(
                    f"{type(self.model).__name__}.batch_joint_feature_difference (example 0): is not zero for "
                    f"y^ = y (largest entry {float(abs(diff).max()):.6g}); the batch form must give "
                    "joint_feature(x, y^) - joint_feature(x, y)",
                    field="batch_joint_feature_difference",
                )

    def _new_tasks(self):
        return [
            StructuredChunk(
                self.model,
                self.X[a:b],
                self.Y[a:b],
                a,
                dim=self.dim,
                check=self.check,
                cache_size=self.cache_size,
                vectorised=self.vectorised,
                batch_forms=self.batch_forms,
            )
            for a, b in self.chunks
        ]

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_bound"] = None
        return state

    def _map(self, w, mode):
        if self._bound is None:
            self._bound = bind_tasks(self.executor, self.tasks)
        return self._bound.map(w, mode)

    def clear_cache(self) -> None:
        """Forget the cached outputs (fresh chunk tasks, shipped again at the next call)."""
        if self._bound is not None:
            self._bound.close()
            self._bound = None
        self.tasks = self._new_tasks()

    def close(self) -> None:
        """Release the chunks bound to the executor's workers (the executor itself stays open)."""
        if self._bound is not None:
            self._bound.close()
            self._bound = None

    def _checked_w(self, w) -> np.ndarray:
        return checked_point(w, self.dim)

    def _slope(self, parts, scale):
        """The merged slope ``scale * sum_i dPhi_i``: dense when the model's features are, else CSR (1, dim)."""
        if len(parts) == 1:  # a chunk's sum is already sorted, unique and without zeros
            idx, val = parts[0].indices, parts[0].values
        else:
            idx, val = sum_rows([p.indices for p in parts], [p.values for p in parts], self.dim)
        val = val * scale
        if any(p.dense for p in parts):
            slope = np.zeros(self.dim)
            slope[idx] = val
            return slope
        return sp.csr_matrix(
            (val, idx.astype(coordinate_dtype(self.dim)), np.array([0, idx.size])), shape=(1, self.dim)
        )

    def __call__(self, w) -> OracleResult:
        """The 1-slack cut at ``w`` (ndarray of shape (dim,)).

        Returns
        -------
        OracleResult
            ``value`` the mean of ``Delta(y_i, y^_i) + <w, Phi(x_i, y^_i) - Phi(x_i, y_i)>``;
            ``cut`` with slope ``(1/n) sum_i Phi(x_i, y^_i) - Phi(x_i, y_i)`` (CSR of shape (1, dim),
            or dense (dim,) for dense joint features) and offset ``(1/n) sum_i Delta(y_i, y^_i)``;
            ``exact`` ``not model.approximate``; ``argmax`` the list of ``y^_i``.
        """
        w = self._checked_w(w)
        parts = self._map(w, "cut")
        n = self.n_samples
        self.n_replaced += sum(p.n_replaced for p in parts)
        slope = self._slope(parts, 1.0 / n)
        offset = sum(p.loss for p in parts) / n
        value = sum(p.value for p in parts) / n
        outputs = [y for p in parts for y in p.outputs]
        return OracleResult(value=value, cut=Cut(slope, offset), exact=self.exact, argmax=outputs)

    def cached_cut(self, w) -> CachedCut:
        """The 1-slack cut from the cached outputs (:class:`cutplane.protocols.CachingOracle`):
        per example the cached output, or the truth, of largest ``Delta + <w, dPhi>``. A valid
        minorant of ``R`` (a fixed output per example); its value at ``w`` is ``<= R(w)``."""
        w = self._checked_w(w)
        parts = self._map(w, "cached")
        n = self.n_samples
        slope = self._slope(parts, 1.0 / n)
        return CachedCut(Cut(slope, sum(p.loss for p in parts) / n), sum(p.value for p in parts) / n)

    def example_cuts(self, w) -> ExampleCuts:
        """One cut per example at ``w`` (the n-slack method,
        :class:`cutplane.protocols.ExampleCutsOracle`): ``R_i(w)``, offsets ``Delta(y_i, y^_i)``,
        slopes ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` as CSR of shape (n_samples, dim); ``argmax`` the
        list of ``y^_i``.; ``exact`` False with an ``approximate`` model (the cuts
        are minorants, the values lower estimates of the risk: the engine warns and marks its
        result inexact)."""
        w = self._checked_w(w)
        parts = self._map(w, "rows")
        self.n_replaced += sum(p.n_replaced for p in parts)
        starts = np.concatenate([[0], np.cumsum([p.indices.size for p in parts])])
        indptr = np.concatenate([[0]] + [p.indptr[1:] + s for p, s in zip(parts, starts[:-1])])
        cdt = coordinate_dtype(self.dim)
        slopes = sp.csr_matrix(
            (
                np.concatenate([p.values for p in parts]),
                np.concatenate([p.indices for p in parts]).astype(cdt),
                indptr.astype(np.int64),
            ),
            shape=(self.n_samples, self.dim),
        )
        risks = np.concatenate([p.risks for p in parts])
        losses = np.concatenate([p.losses for p in parts])
        return ExampleCuts(risks, losses, slopes, [y for p in parts for y in p.outputs], exact=self.exact)

    def example_oracles(self) -> StructuredExampleOracle:
        """The per-example oracle of SPOM / PEGASOS (:class:`cutplane.protocols.ExampleOracle`),
        in this process (:class:`~oracles.structured_examples.StructuredExampleOracle`)."""
        return StructuredExampleOracle(self.model, self.X, self.Y, dim=self.dim, check=self.check)

    # -- the per-example contract shared by the structured oracles (example index first) -------
    def _example(self, i):
        i = int(i)
        if not 0 <= i < self.n_samples:
            raise InputError(f"example index {i} out of range [0, {self.n_samples})", field="i")
        return self.X[i], self.Y[i]

    def example_loss_augmented_argmax(self, i, w):
        """``y^_i``: the model's loss-augmented argmax of training example ``i`` at ``w``."""
        x, y = self._example(i)
        return self.model.loss_augmented_argmax(x, y, self._checked_w(w))

    def example_argmax(self, i, w):
        """The model's prediction of training example ``i`` at ``w``."""
        return self.model.argmax(self._example(i)[0], self._checked_w(w))

    def example_joint_feature(self, i, y):
        """``Phi(x_i, y)`` as the model returns it (ndarray of shape (dim,) or a sparse row)."""
        return self.model.joint_feature(self._example(i)[0], y)

    def example_loss(self, i, y) -> float:
        """``Delta(y_i, y)``, checked (finite, ``>= 0``)."""
        return self.loss(self._example(i)[1], y)

    def predict(self, X, w) -> list:
        """The model's predictions ``argmax_y <w, Phi(x, y)>`` of the inputs ``X`` (a list), by
        ``model.batch_argmax`` over chunks of ``X`` through the executor."""
        w = self._checked_w(w)
        X = list(X)
        if not X:
            return []
        bounds = chunk_bounds(len(X), len(self.chunks))
        task = PredictTask(self.model, w)
        if len(bounds) == 1:
            return task(X)
        return [y for part in self.executor.map(task, [X[a:b] for a, b in bounds]) for y in part]

    def loss(self, y, y_hat) -> float:
        """The model's loss, checked (finite, ``>= 0``)."""
        return ModelChecks(self.model, self.dim, True).loss(y, y_hat)

    def __repr__(self):
        return (
            f"{type(self).__name__}({type(self.model).__name__}, n_samples={self.n_samples}, dim={self.dim}, "
            f"chunks={len(self.chunks)}, cache_size={self.cache_size})"
        )
