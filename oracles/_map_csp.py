"""The CSP formed by the active joint states (Franc et al. 2012, sec. 1.4.3) and labelling decoders.

The relaxation is tight exactly when this CSP is satisfiable: variables are the nodes, a node's
domain is its set of active states, an edge allows its active state pairs, and an added zero
cycle subproblem allows its active joint states. :func:`solve_csp` decides it by arc consistency
(AC-3) followed by backtracking search that maintains arc consistency (MAC), smallest domain first;
cycle constraints enter arc consistency through their projections on their edges and are checked
in full once all their nodes are assigned. Satisfiability is NP-complete in general, so the search
has a budget of assignments; past it the answer is ``"unknown"`` (treated as not tight). On grids
up to ~10 x 10 with a few states the search finishes in well under the budget.

When the CSP is not satisfiable, :func:`greedy_decode` builds a labelling from the reparametrised
weights (sequentially, each node given its already decoded neighbours) and :func:`icm` improves it
on the original weights; its value is a lower bound on the maximum.
"""

from __future__ import annotations

import sys
from collections import deque
from typing import NamedTuple

import numpy as np

__all__ = ["CSPResult", "solve_csp", "greedy_decode", "icm"]


class CSPResult(NamedTuple):
    """Outcome of :func:`solve_csp`.

    Attributes
    ----------
    status : {"sat", "unsat", "unknown"}
    labels : ndarray of shape (n_nodes,) or None
        A solution when ``status == "sat"``.
    n_assignments : int
        Assignments tried by the search.
    """

    status: str
    labels: np.ndarray | None
    n_assignments: int


def _adjacency(n_nodes, edges):
    adj: list[list[tuple[int, int, bool]]] = [[] for _ in range(n_nodes)]
    for e, (u, v) in enumerate(edges):
        adj[u].append((v, e, True))  # True: the node is the edge's first endpoint
        adj[v].append((u, e, False))
    return adj


def _revise(domains, x, y, rel_xy, trail):
    """Remove from dom(x) the values without support in dom(y); rel_xy[a, b] allows (x=a, y=b)."""
    dy = list(domains[y])
    keep = {a for a in domains[x] if rel_xy[a, dy].any()}
    if len(keep) < len(domains[x]):
        trail.append((x, domains[x]))
        domains[x] = keep
        return True
    return False


def _ac3(domains, adj, rels, queue, trail):
    """Arc consistency from the arcs in ``queue``; False when a domain empties.

    Replaced domains are pushed on ``trail`` as (node, old domain) so a search can undo them.
    """
    in_queue = set(queue)
    queue = deque(queue)
    while queue:
        x, y, e, first = queue.popleft()
        in_queue.discard((x, y, e, first))
        rel = rels[e] if first else rels[e].T
        if _revise(domains, x, y, rel, trail):
            if not domains[x]:
                return False
            for z, e2, f2 in adj[x]:
                if z != y:
                    arc = (z, x, e2, not f2)
                    if arc not in in_queue:
                        in_queue.add(arc)
                        queue.append(arc)
    return True


def solve_csp(node_domains, edges, edge_relations, cycle_checks=(), budget=200_000):
    """Decide the CSP of active states and return a solution when it exists.

    Parameters
    ----------
    node_domains : list of ndarray of bool, each of shape (K_v,)
        Active states of each node.
    edges : ndarray of shape (n_edges, 2)
    edge_relations : list of ndarray of bool, each of shape (K_u, K_v)
        Allowed (active) state pairs of each edge, already intersected with the projections of
        the cycle constraints.
    cycle_checks : sequence of (tuple of int, callable)
        ``(nodes, check)`` with ``check(labels_of_nodes) -> bool`` for each cycle constraint.
    budget : int, default=200000
        Maximum number of assignments tried.

    Returns
    -------
    CSPResult
    """
    n = len(node_domains)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    adj = _adjacency(n, edges)
    domains = [set(np.flatnonzero(d).tolist()) for d in node_domains]
    if any(not d for d in domains):
        return CSPResult("unsat", None, 0)
    arcs = [(x, y, e, f) for x in range(n) for (y, e, f) in adj[x]]
    if not _ac3(domains, adj, edge_relations, arcs, []):
        return CSPResult("unsat", None, 0)
    by_node: list[list[tuple]] = [[] for _ in range(n)]  # node -> [(nodes, check)]
    for nodes, check in cycle_checks:
        for v in nodes:
            by_node[v].append((nodes, check))
    labels = np.full(n, -1, dtype=np.int64)
    count = 0

    def cycles_ok(v):
        for nodes, check in by_node[v]:
            if all(labels[u] >= 0 for u in nodes) and not check(labels[list(nodes)]):
                return False
        return True

    def undo(trail, mark):
        while len(trail) > mark:
            x, old = trail.pop()
            domains[x] = old

    def search(trail):
        """MAC backtracking on ``domains`` (changed in place, undone through ``trail``)."""
        nonlocal count
        free = [v for v in range(n) if labels[v] < 0]
        if not free:
            return True
        v = min(free, key=lambda u: len(domains[u]))
        for a in sorted(domains[v]):
            count += 1
            if count > budget:
                raise _BudgetExceeded
            labels[v] = a
            if cycles_ok(v):
                mark = len(trail)
                trail.append((v, domains[v]))
                domains[v] = {a}
                queue = [(y, v, e, not f) for (y, e, f) in adj[v] if labels[y] < 0]
                if _ac3(domains, adj, edge_relations, queue, trail) and search(trail):
                    return True
                undo(trail, mark)
            labels[v] = -1
        return False

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * n + 1000))  # one frame per assigned node (and AC helpers)
    try:
        found = search([])
    except _BudgetExceeded:
        return CSPResult("unknown", None, count)
    finally:
        sys.setrecursionlimit(limit)
    return CSPResult("sat", labels.copy(), count) if found else CSPResult("unsat", None, count)


class _BudgetExceeded(Exception):
    pass


def greedy_decode(node_scores, edges, edge_scores, order=None):
    """Decode node by node: each takes the best state given its already decoded neighbours.

    Parameters
    ----------
    node_scores : list of ndarray of shape (K_v,)
    edges : ndarray of shape (n_edges, 2)
    edge_scores : list of ndarray of shape (K_u, K_v)
    order : sequence of int, optional
        Visiting order; default breadth-first from node 0 of each connected component.

    Returns
    -------
    labels : ndarray of shape (n_nodes,)
    """
    n = len(node_scores)
    adj = _adjacency(n, np.asarray(edges, dtype=np.int64).reshape(-1, 2))
    if order is None:
        order, seen = [], np.zeros(n, dtype=bool)
        for root in range(n):
            if seen[root]:
                continue
            seen[root] = True
            queue = deque([root])
            while queue:
                v = queue.popleft()
                order.append(v)
                for y, _, _ in adj[v]:
                    if not seen[y]:
                        seen[y] = True
                        queue.append(y)
    labels = np.full(n, -1, dtype=np.int64)
    for v in order:
        score = np.array(node_scores[v], dtype=np.float64)
        for y, e, first in adj[v]:
            if labels[y] >= 0:
                score = score + (edge_scores[e][:, labels[y]] if first else edge_scores[e][labels[y], :])
        labels[v] = int(np.argmax(score))
    return labels


def icm(labels, unary, edges, pairwise, max_rounds=50):
    """Iterated conditional modes on the original weights: coordinate ascent, never worse.

    Parameters
    ----------
    labels : ndarray of shape (n_nodes,)
        Start labelling (not modified).
    unary : list of ndarray of shape (K_v,)
    edges : ndarray of shape (n_edges, 2)
    pairwise : list of ndarray of shape (K_u, K_v)
    max_rounds : int, default=50

    Returns
    -------
    labels : ndarray of shape (n_nodes,)
    """
    labels = np.array(labels, dtype=np.int64)
    n = len(unary)
    adj = _adjacency(n, np.asarray(edges, dtype=np.int64).reshape(-1, 2))
    for _ in range(max_rounds):
        changed = False
        for v in range(n):
            score = np.array(unary[v], dtype=np.float64)
            for y, e, first in adj[v]:
                score = score + (pairwise[e][:, labels[y]] if first else pairwise[e][labels[y], :])
            best = int(np.argmax(score))
            if score[best] > score[labels[v]]:
                labels[v] = best
                changed = True
        if not changed:
            break
    return labels
