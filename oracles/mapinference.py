"""MAP inference by max-sum diffusion and the dual cutting-plane algorithm (Franc et al. 2012, sec. 1.4).

The problem (31) is ``max_x sum_v theta_v(x_v) + sum_{(u,v) in E} theta_uv(x_u, x_v)`` with weights in
R or -inf (hard constraints). Its LP relaxation is minimised in the dual, eq. (37), over
reparametrisations ``theta^phi`` (eq. 38) of the subproblems: nodes, edges and, once added, zero
cycle subproblems. :func:`max_sum_diffusion` runs Alg. 1.6 over the pairs
``J = {(edge, endpoint)} u {(cycle, edge of the cycle)}``; :func:`dual_cutting_plane` runs Alg. 1.7:
diffusion, then the separation test on candidate zero cycles (triangles and 4-cycles of the graph,
i.e. all unit squares of a grid), then adding the separating ones with zero messages, until the
relaxation is tight, no candidate separates, or a budget runs out. Because that test is greedy
(sec. 1.4.5) and diffusion may stop at a non-optimal fixed point, by default a step where no
single cycle separates couples all candidates through nodes with several active states
(``fallback=True``); on random frustrated grids this closes the gap more often than the pure
test (compared by ``benchmarks/map_tightening.py``).

Both return a :class:`MapResult`: the upper bound ``sum_A max theta^phi_A`` (eq. 37/40), the active
joint states, a decoded labelling with its true value (a lower bound on the maximum), and ``tight``.

Tightness. The relaxation is tight iff the CSP of active joint states is satisfiable (sec. 1.4.3).
States are active within ``active_tol`` of their subproblem's maximum (diffusion converges only
in the limit). A solution of that CSP, found by arc consistency and backtracking search
(:mod:`oracles._map_csp`), is returned as ``labels``; it is certified by
``upper_bound - lower_bound <= n_subproblems * active_tol``, since every subproblem's term is within
``active_tol`` of its maximum and reparametrisation preserves the objective. ``tight`` is also set when
another decoded labelling attains the bound within ``gap_tol``.

The -inf condition. Alg. 1.6 requires ``theta_B(x_B) > -inf <=> max_{x_A\\B} theta_A(x_A) > -inf`` for
every pair (A, B) in J. For the pairs (edge, endpoint) this is checked on the input (an
:class:`~cutplane.exceptions.InputError` names the edge, node and state otherwise). A zero cycle is
taken as -inf wherever one of its edges is (this does not change (31)); a candidate cycle on which
some finite edge state has no finite completion violates the condition and is not added.

Example
-------
>>> from oracles.mapinference import random_grid_instance, dual_cutting_plane
>>> inst = random_grid_instance(4, 4, 3, coupling=2.0, seed=0)
>>> res = dual_cutting_plane(inst.unary, inst.pairwise, inst.edges)
>>> bool(res.upper_bound >= res.lower_bound - 1e-9)
True
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError

from ._map_csp import greedy_decode, icm, solve_csp
from ._map_graphs import GridInstance, grid_cycles, grid_edges, random_grid_instance, short_cycles
from ._map_model import MaxSumModel, validate_problem

__all__ = [
    "MapResult",
    "StepInfo",
    "max_sum_diffusion",
    "dual_cutting_plane",
    "GridInstance",
    "grid_edges",
    "grid_cycles",
    "short_cycles",
    "random_grid_instance",
    "validate_problem",
    "labelling_value",
]

logger = logging.getLogger(__name__)


class StepInfo(NamedTuple):
    """State of :func:`dual_cutting_plane` after the diffusion of one step (passed to ``callback``).

    Attributes
    ----------
    step : int
    upper_bound, lower_bound : float
        The bound and the value of the best labelling so far.
    labels : ndarray of shape (n_nodes,)
    csp_status : str
    active_nodes, active_edges : list of ndarray of bool
    cycles : list of tuple of int
        Zero cycle subproblems in J.
    """

    step: int
    upper_bound: float
    lower_bound: float
    labels: np.ndarray
    csp_status: str
    active_nodes: list
    active_edges: list
    cycles: list


@dataclass
class MapResult:
    """Outcome of max-sum diffusion or of the dual cutting-plane algorithm.

    Attributes
    ----------
    upper_bound : float
        ``sum_A max_{x_A} theta^phi_A(x_A)`` at the final reparametrisation (eq. 37/40).
    lower_bound : float
        Value (31) of ``labels`` on the original weights.
    labels : ndarray of shape (n_nodes,)
        The best decoded labelling.
    tight : bool
        The relaxation is tight: the CSP of active states is satisfiable (``labels`` solves it), or
        ``upper_bound - lower_bound <= gap_tol``.
    csp_status : {"sat", "unsat", "unknown"}
        Outcome of the CSP of active states at the end ("unknown": search budget exhausted).
    active_nodes : list of ndarray of bool, each of shape (K_v,)
    active_edges : list of ndarray of bool, each of shape (K_u, K_v)
        Active states of the final reparametrisation (within ``active_tol``).
    theta_nodes, theta_edges : list of ndarray
        The final reparametrised weights of nodes and edges.
    bound_history : ndarray of shape (n_records,)
        Upper bound at the start, after every diffusion sweep and after every change of J.
    step_bounds : ndarray of shape (n_steps,)
        Upper bound at the end of each outer step (one step for plain diffusion).
    step_times : ndarray of shape (n_steps,)
        Wall-clock seconds since the start at the end of each step.
    n_sweeps : int
    converged : bool
        The last diffusion run met its tolerance.
    cycles : list of tuple of int
        Zero cycle subproblems in J at the end.
    added : list of list of tuple of int
        Cycles added at each step.
    n_added, n_removed : int
    n_fallback : int
        Steps that added non-separating candidates (``fallback`` of :func:`dual_cutting_plane`).
    status : str
        Why it stopped: "tight", "no_separating_cycle", "max_steps", "time_limit" or, for
        plain diffusion, "converged" / "max_iter".
    """

    upper_bound: float
    lower_bound: float
    labels: np.ndarray
    tight: bool
    csp_status: str
    active_nodes: list
    active_edges: list
    theta_nodes: list
    theta_edges: list
    bound_history: np.ndarray
    step_bounds: np.ndarray
    step_times: np.ndarray
    n_sweeps: int
    converged: bool
    cycles: list = field(default_factory=list)
    added: list = field(default_factory=list)
    n_added: int = 0
    n_removed: int = 0
    n_fallback: int = 0
    status: str = ""

    @property
    def gap(self):
        """``upper_bound - lower_bound`` (>= 0 up to rounding)."""
        return self.upper_bound - self.lower_bound


def labelling_value(unary, pairwise, edges, labels):
    """Objective (31) of a labelling: ``sum_v unary[v][x_v] + sum_e pairwise[e][x_u, x_v]``."""
    unary, pairwise, edges = validate_problem(unary, pairwise, edges)
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (len(unary),) or (labels < 0).any() or any(labels[v] >= u.size for v, u in enumerate(unary)):
        raise InputError(f"expected {len(unary)} labels within each node's states", field="labels")
    return float(
        sum(u[x] for u, x in zip(unary, labels)) + sum(p[labels[a], labels[b]] for p, (a, b) in zip(pairwise, edges))
    )


def _default_tols(model, active_tol, tol):
    fin = np.concatenate([model.th0_node[model.node_fin], model.th0_edge[model.edge_fin]])
    scale = max(1.0, float(np.abs(fin).max())) if fin.size else 1.0
    return (1e-5 * scale if active_tol is None else float(active_tol)), (1e-8 * scale if tol is None else float(tol))


def _decode(model, active_tol, budget):
    """Active states, CSP of active states, decoded labelling and its value."""
    node_act, edge_act = model.active(active_tol)
    node_dom = model.node_tables(node_act)
    relations = [r & np.outer(node_dom[u], node_dom[v]) for r, (u, v) in zip(model.edge_tables(edge_act), model.edges)]
    checks = []
    for c, (cmax, mms) in enumerate(model.cycle_values()):
        for s, mm in zip(range(model.coff[c], model.coff[c + 1]), mms):
            e = model._slot_edge[s]
            relations[e] = relations[e] & (mm >= cmax - active_tol).reshape(relations[e].shape)
        checks.append((model.cycles[c], lambda x, c=c, cmax=cmax: model.cycle_value_at(c, x) >= cmax - active_tol))
    csp = solve_csp(node_dom, model.edges, relations, checks, budget=budget)
    if csp.status == "sat":
        labels = csp.labels
    else:
        labels = greedy_decode(model.node_tables(), model.edges, model.edge_tables())
    labels = icm(labels, model.unary, model.edges, model.pairwise)
    return labels, model.value(labels), csp.status, node_dom, model.edge_tables(edge_act)


def _result(
    model, best, csp_status, node_dom, edge_dom, history, step_bounds, step_times, n_sweeps, converged, gap_tol, **extra
):
    labels, lb = best
    ub = float(model.bound())
    tight = csp_status == "sat" or ub - lb <= gap_tol
    return MapResult(
        ub,
        lb,
        labels,
        bool(tight),
        csp_status,
        [d.copy() for d in node_dom],
        [d.copy() for d in edge_dom],
        [t.copy() for t in model.node_tables()],
        [t.copy() for t in model.edge_tables()],
        np.asarray(history, dtype=np.float64),
        np.asarray(step_bounds, dtype=np.float64),
        np.asarray(step_times, dtype=np.float64),
        int(n_sweeps),
        bool(converged),
        list(model.cycles),
        **extra,
    )


def max_sum_diffusion(
    unary, pairwise, edges, *, cycles=None, max_iter=10_000, tol=None, active_tol=None, gap_tol=1e-6, csp_budget=200_000
):
    """Max-sum diffusion (Alg. 1.6) on a pairwise problem, optionally with zero cycle subproblems.

    Parameters
    ----------
    unary : list of ndarray of shape (K_v,), or ndarray of shape (n_nodes, K)
        Node weights in R u {-inf}.
    pairwise : list of ndarray of shape (K_u, K_v), or ndarray of shape (n_edges, K, K)
        Edge weights ``pairwise[e][x_u, x_v]`` for ``edges[e] = (u, v)``, in R u {-inf}.
    edges : array-like of shape (n_edges, 2)
        Distinct undirected edges, no self-loops.
    cycles : list of tuple of int, optional
        Zero cycle subproblems to couple to their edges (node tuples in traversal order).
    max_iter : int, default=10000
        Maximum number of sweeps over J.
    tol : float, optional
        Stop when the largest message change in a sweep is below ``tol``
        (default ``1e-8 * max(1, max |finite weight|)``).
    active_tol : float, optional
        A joint state is active within ``active_tol`` of its subproblem's maximum
        (default ``1e-5 * max(1, max |finite weight|)``).
    gap_tol : float, default=1e-6
        A decoded labelling within ``gap_tol`` of the bound also certifies tightness.
    csp_budget : int, default=200000
        Assignments allowed to the CSP search.

    Returns
    -------
    MapResult
    """
    t0 = time.perf_counter()
    model = MaxSumModel(unary, pairwise, edges)
    active_tol, tol = _default_tols(model, active_tol, tol)
    for c in cycles or ():
        model.cycle_slots(c)
        if not model.cycle_condition_ok(c):
            raise InputError(
                f"cycle {tuple(c)}: a finite edge state has no finite completion around the cycle, "
                "which breaks the -inf condition of Alg. 1.6",
                field="cycles",
            )
    model.add_cycles(cycles or ())
    b0 = model.bound()
    hist, converged = model.diffuse(max_iter, tol)
    labels, lb, status, node_dom, edge_dom = _decode(model, active_tol, csp_budget)
    return _result(
        model,
        (labels, lb),
        status,
        node_dom,
        edge_dom,
        np.concatenate([[b0], hist]),
        [model.bound()],
        [time.perf_counter() - t0],
        len(hist),
        converged,
        gap_tol,
        status="converged" if converged else "max_iter",
    )


def _cycle_key(model, cycle):
    return frozenset(model.cycle_slots(cycle)[0].tolist())


def dual_cutting_plane(
    unary,
    pairwise,
    edges,
    *,
    candidates=None,
    max_steps=50,
    max_add=None,
    max_iter=10_000,
    tol=None,
    active_tol=None,
    gap_tol=1e-6,
    prune_every=5,
    fallback=True,
    time_limit=None,
    csp_budget=200_000,
    callback=None,
):
    """The dual cutting-plane algorithm (Alg. 1.7) with zero cycle subproblems.

    Each step runs max-sum diffusion to convergence (or ``max_iter`` sweeps), decodes, stops if the
    relaxation is tight, and otherwise applies the separation test of sec. 1.4.5 to every candidate
    cycle not yet in J: the CSP of active states restricted to the cycle is unsatisfiable (then
    inequality (42) is not tight and coupling the cycle will improve the bound). The separating
    cycles, ranked by the gap of (42) (an estimate of the gain), are added with zero messages
    (the bound does not change at that moment). Every ``prune_every`` steps, cycles added at least
    one step earlier whose removal would not increase the bound (typically: all messages zero) are
    removed, their messages folded back into their edges, so the bound stays monotone.

    Parameters
    ----------
    unary, pairwise, edges
        As in :func:`max_sum_diffusion`.
    candidates : list of tuple of int, optional
        Candidate zero cycles (node tuples in traversal order). Default: all triangles and
        4-cycles of the graph (:func:`short_cycles`; on a grid, all its unit squares). Candidates
        breaking the -inf condition of Alg. 1.6 are skipped.
    max_steps : int, default=50
        Maximum number of separation steps.
    max_add : int, optional
        Add at most this many separating cycles per step (the largest gaps first); default all.
    max_iter : int, default=10000
        Maximum diffusion sweeps per step.
    tol, active_tol, gap_tol, csp_budget
        As in :func:`max_sum_diffusion`.
    prune_every : int or None, default=5
        Period (in steps) of the removal of redundant cycles; None disables it.
    fallback : bool, default=True
        When no single candidate separates but the CSP of active states is unsatisfiable (the
        greediness of sec. 1.4.5: cycles that do not help alone may help together, and diffusion
        may stop at a non-optimal fixed point of the dual), add every remaining candidate through a
        node with more than one active state. False gives the pure separation test.
    time_limit : float, optional
        Seconds; checked after each step.
    callback : callable, optional
        Called as ``callback(info)`` with a :class:`StepInfo` after each step's diffusion
        (for logging and plots), before any cycle is added in that step.

    Returns
    -------
    MapResult
        ``bound_history`` holds the bound at the start, after every sweep and after every change
        of J; ``step_bounds`` / ``step_times`` the bound/time curve per step.
    """
    t0 = time.perf_counter()
    model = MaxSumModel(unary, pairwise, edges)
    active_tol, tol = _default_tols(model, active_tol, tol)
    if candidates is None:
        candidates = short_cycles(len(model.unary), model.edges)
    candidates = [tuple(int(v) for v in c) for c in candidates]
    for c in candidates:
        model.cycle_slots(c)
    candidates = [c for c in candidates if model.cycle_condition_ok(c)]
    history, step_bounds, step_times, added = [model.bound()], [], [], []
    best, n_sweeps, n_added, n_removed, n_fallback = None, 0, 0, 0, 0
    age: dict[frozenset, int] = {}  # cycle (its slots) -> the step it was added at
    status = "max_steps"
    for step in range(max_steps + 1):
        hist, converged = model.diffuse(max_iter, tol)
        history.extend(hist.tolist())
        n_sweeps += len(hist)
        labels, lb, csp_status, node_dom, edge_dom = _decode(model, active_tol, csp_budget)
        if best is None or lb > best[1]:
            best = (labels, lb)
        ub = model.bound()
        step_bounds.append(ub)
        step_times.append(time.perf_counter() - t0)
        logger.info(
            "step %d: upper bound %.10g, lower bound %.10g, %d cycles, CSP %s",
            step,
            ub,
            best[1],
            len(model.cycles),
            csp_status,
        )
        if callback is not None:
            callback(
                StepInfo(
                    step,
                    ub,
                    best[1],
                    best[0].copy(),
                    csp_status,
                    [d.copy() for d in node_dom],
                    [d.copy() for d in edge_dom],
                    list(model.cycles),
                )
            )
        if csp_status == "sat" or ub - best[1] <= gap_tol:
            status = "tight"
            break
        if step == max_steps:
            break
        if time_limit is not None and step_times[-1] > time_limit:
            status = "time_limit"
            break
        if prune_every and step and step % prune_every == 0:
            for i in reversed(range(len(model.cycles))):
                if age.get(_cycle_key(model, model.cycles[i]), step) < step and model.removal_change(i) <= 0.0:
                    model.remove_cycle(i)
                    n_removed += 1
                    history.append(model.bound())
            node_act, edge_act = model.active(active_tol)
        else:
            node_act, edge_act = model.active(active_tol)
        present = {_cycle_key(model, c) for c in model.cycles}
        pool = [c for c in candidates if _cycle_key(model, c) not in present]
        separating, gap = model.separation(pool, node_act, edge_act)
        order = [i for i in np.argsort(-gap, kind="stable") if separating[i]]
        if not order and fallback:
            # greediness (sec. 1.4.5): no single cycle separates, but several together may.
            # Couple every candidate through a node with more than one active state.
            undecided = {v for v, d in enumerate(model.node_tables(node_act)) if d.sum() > 1}
            order = [i for i in np.argsort(-gap, kind="stable") if undecided.intersection(pool[i])]
            n_fallback += bool(order)
        if max_add is not None:
            order = order[: int(max_add)]
        if not order:
            status = "no_separating_cycle"
            break
        chosen = [pool[i] for i in order]
        model.add_cycles(chosen)
        for c in chosen:
            age[_cycle_key(model, c)] = step
        added.append(chosen)
        n_added += len(chosen)
        history.append(model.bound())
    return _result(
        model,
        best,
        csp_status,
        node_dom,
        edge_dom,
        history,
        step_bounds,
        step_times,
        n_sweeps,
        converged,
        gap_tol,
        added=added,
        n_added=n_added,
        n_removed=n_removed,
        n_fallback=n_fallback,
        status=status,
    )
