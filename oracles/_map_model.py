"""A pairwise max-sum problem under reparametrisation: validation, diffusion state, zero cycles.

:class:`MaxSumModel` holds the reparametrised weights ``theta^phi`` (eq. 38) of the nodes and
edges and the messages of the added zero cycle subproblems, with the operations the dual
cutting-plane algorithm needs: diffusion sweeps (Alg. 1.6, numba kernels in
:mod:`oracles._diffusion_kernels`), the upper bound (eq. 37/40), active states, adding zero
cycles with zero messages (Alg. 1.7 lines 5-6), the separation test on a candidate cycle
(sec. 1.4.5) with the gap of inequality (42), and the removal of a redundant cycle.
"""

from __future__ import annotations

import numpy as np

from cutplane.exceptions import InputError

from . import _diffusion_kernels as K

__all__ = ["MaxSumModel", "validate_problem"]


def _as_table(x, ndim, field, index):
    try:
        arr = np.array(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"entry {index} is not numeric ({exc})", field=field) from None
    if arr.ndim != ndim:
        raise InputError(f"entry {index} must have {ndim} dimension(s), got shape {arr.shape}", field=field)
    if np.isnan(arr).any():
        raise InputError(f"entry {index} contains NaN", field=field)
    if np.isposinf(arr).any():
        raise InputError(f"entry {index} contains +inf (only -inf, a hard constraint, is allowed)", field=field)
    return arr


def validate_problem(unary, pairwise, edges):
    """Check a pairwise problem and return (unary list, pairwise list, edges (E, 2) int64).

    Raises :class:`~cutplane.exceptions.InputError` on shape mismatch, NaN, +inf, bad or repeated
    edges, a node with every state -inf, or -inf weights breaking the condition stated before
    Alg. 1.6: for every pair (edge e, endpoint v), ``theta_v(x_v) > -inf`` iff
    ``max_{x_other} theta_e(x_e) > -inf``.
    """
    if isinstance(unary, np.ndarray) and unary.ndim == 2:
        unary = list(unary)
    try:
        n = len(unary)
    except TypeError:
        raise InputError("expected a list of (K_v,) vectors or an (n_nodes, K) array", field="unary") from None
    unary = [_as_table(u, 1, "unary", i) for i, u in enumerate(unary)]
    for i, u in enumerate(unary):
        if u.size == 0:
            raise InputError(f"node {i} has no states", field="unary")
        if np.isneginf(u).all():
            raise InputError(f"every state of node {i} is -inf: the problem has no finite labelling", field="unary")
    try:
        edges = np.asarray(edges)
        if edges.size == 0:
            edges = np.zeros((0, 2), dtype=np.int64)
        if edges.ndim != 2 or edges.shape[1] != 2 or not np.issubdtype(edges.dtype, np.integer):
            raise ValueError
    except (TypeError, ValueError):
        raise InputError("expected an (n_edges, 2) integer array or a list of (u, v) pairs", field="edges") from None
    edges = edges.astype(np.int64)
    if ((edges < 0) | (edges >= n)).any():
        raise InputError(f"node index out of range [0, {n})", field="edges")
    if (edges[:, 0] == edges[:, 1]).any():
        raise InputError(f"self-loop at edge {int(np.flatnonzero(edges[:, 0] == edges[:, 1])[0])}", field="edges")
    keys = np.sort(edges, axis=1)
    if len(np.unique(keys, axis=0)) != len(edges):
        raise InputError("repeated edge (merge the tables of parallel edges)", field="edges")
    if isinstance(pairwise, np.ndarray) and pairwise.ndim == 3:
        pairwise = list(pairwise)
    if len(pairwise) != len(edges):
        raise InputError(f"{len(pairwise)} tables for {len(edges)} edges", field="pairwise")
    pairwise = [_as_table(p, 2, "pairwise", e) for e, p in enumerate(pairwise)]
    for e, ((u, v), p) in enumerate(zip(edges, pairwise)):
        if p.shape != (unary[u].size, unary[v].size):
            raise InputError(
                f"table {e} of edge ({u}, {v}) has shape {p.shape}, expected ({unary[u].size}, {unary[v].size})",
                field="pairwise",
            )
        for node, side, axis in ((u, "row", 1), (v, "column", 0)):
            bad = np.isfinite(unary[node]) != np.isfinite(p).any(axis=axis)
            if bad.any():
                x = int(np.flatnonzero(bad)[0])
                raise InputError(
                    f"edge {e} = ({u}, {v}), node {node}, state {x}: unary is "
                    f"{'finite' if np.isfinite(unary[node][x]) else '-inf'} but the table's {side} {x} is "
                    f"{'all -inf' if np.isfinite(unary[node][x]) else 'not all -inf'}; max-sum diffusion "
                    "(Alg. 1.6) requires theta_v(x_v) > -inf <=> max over the edge's other node > -inf",
                    field="pairwise",
                )
    return unary, pairwise, edges


class MaxSumModel:
    """Reparametrised pairwise problem with optional zero cycle subproblems.

    Parameters
    ----------
    unary, pairwise, edges
        As in :func:`oracles.mapinference.max_sum_diffusion` (validated here).
    """

    def __init__(self, unary, pairwise, edges):
        self.unary, self.pairwise, self.edges = validate_problem(unary, pairwise, edges)
        self.n_states = np.array([u.size for u in self.unary], dtype=np.int64)
        self.noff = np.concatenate([[0], np.cumsum(self.n_states)]).astype(np.int64)
        sizes = np.array([p.size for p in self.pairwise], dtype=np.int64)
        self.eoff = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.eu = self.edges[:, 0].copy()
        self.ev = self.edges[:, 1].copy()
        self.th0_node = np.concatenate(self.unary) if self.unary else np.zeros(0)
        self.th0_edge = np.concatenate([p.ravel() for p in self.pairwise]) if self.pairwise else np.zeros(0)
        self.node_fin = np.isfinite(self.th0_node)
        self.edge_fin = np.isfinite(self.th0_edge)
        self.th_node = self.th0_node.copy()
        self.th_edge = self.th0_edge.copy()
        self.kmax = int(self.n_states.max()) if len(self.n_states) else 1
        self._edge_id = {(int(min(u, v)), int(max(u, v))): e for e, (u, v) in enumerate(self.edges)}
        self.cycles = []
        self._slot_edge = np.zeros(0, dtype=np.int64)
        self._slot_flip = np.zeros(0, dtype=np.int64)
        self.coff = np.zeros(1, dtype=np.int64)
        self.cmsg = np.zeros(0)
        self._rebuild()

    # -- layout ---------------------------------------------------------------------------
    def cycle_slots(self, cycle):
        """Edges and traversal flips of a cycle given as a node tuple (InputError if not a cycle)."""
        nodes = tuple(int(v) for v in cycle)
        if len(nodes) < 3 or len(set(nodes)) != len(nodes):
            raise InputError(f"a cycle needs >= 3 distinct nodes, got {nodes}", field="cycles")
        es, flips = [], []
        for a, b in zip(nodes, nodes[1:] + nodes[:1]):
            e = self._edge_id.get((min(a, b), max(a, b)))
            if e is None:
                raise InputError(f"cycle {nodes} uses ({a}, {b}), which is not an edge", field="cycles")
            es.append(e)
            flips.append(0 if self.eu[e] == a else 1)
        return np.array(es, dtype=np.int64), np.array(flips, dtype=np.int64)

    def _layout(self, slot_edge, slot_flip, coff):
        ku = self.n_states[self.eu[slot_edge]]
        kv = self.n_states[self.ev[slot_edge]]
        return self.eoff[slot_edge], ku, kv, slot_flip, coff

    def _rebuild(self):
        sizes = (
            (self.eoff[self._slot_edge + 1] - self.eoff[self._slot_edge])
            if len(self._slot_edge)
            else np.zeros(0, dtype=np.int64)
        )
        self.slot_moff = (
            np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, dtype=np.int64)
        )
        self.slot_eoff, self.slot_ku, self.slot_kv, _, _ = self._layout(self._slot_edge, self._slot_flip, self.coff)

    def _candidate_layout(self, cycles):
        parts = [self.cycle_slots(c) for c in cycles]
        slot_edge = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        slot_flip = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        coff = np.concatenate([[0], np.cumsum([len(p[0]) for p in parts])]).astype(np.int64)
        return slot_edge, self._layout(slot_edge, slot_flip, coff)

    # -- diffusion ------------------------------------------------------------------------
    def _args(self):
        return (self.cmsg, self.slot_eoff, self.slot_moff, self.slot_ku, self.slot_kv, self._slot_flip, self.coff)

    def bound(self):
        """The upper bound (eq. 40) at the current reparametrisation."""
        cm, se, sm, sku, skv, sf, co = self._args()
        return float(
            K.upper_bound(
                self.th_node, self.noff, self.th_edge, self.eoff, cm, se, sm, sku, skv, sf, co, self.edge_fin, self.kmax
            )
        )

    def diffuse(self, max_iter, tol):
        """Run up to ``max_iter`` sweeps; returns (bounds after each sweep, converged)."""
        hist = np.empty(max(int(max_iter), 0))
        cm, se, sm, sku, skv, sf, co = self._args()
        n, conv = K.diffuse(
            self.th_node,
            self.noff,
            self.th_edge,
            self.eoff,
            self.eu,
            self.ev,
            self.n_states,
            self.node_fin,
            self.edge_fin,
            cm,
            se,
            sm,
            sku,
            skv,
            sf,
            co,
            self.kmax,
            int(max_iter),
            float(tol),
            hist,
        )
        return hist[:n], bool(conv)

    # -- zero cycle subproblems -----------------------------------------------------------
    def cycle_condition_ok(self, cycle):
        """Alg. 1.6's -inf condition for the pairs (cycle, edge): finite edge states extend around it."""
        slot_edge, (te, ku, kv, fl, coff) = self._candidate_layout([cycle])
        zeros = np.zeros_like(self.th_edge)
        for j in range(len(slot_edge)):
            out = np.empty(ku[j] * kv[j])
            K.slot_maxmarginal(zeros, te, self.edge_fin, te, ku, kv, fl, 0, len(slot_edge), j, self.kmax, out)
            if not np.array_equal(np.isfinite(out), self.edge_fin[te[j] : te[j] + out.size]):
                return False
        return True

    def add_cycles(self, cycles):
        """Append zero cycle subproblems with zero messages: the bound does not change."""
        for c in cycles:
            es, fl = self.cycle_slots(c)
            self.cycles.append(tuple(int(v) for v in c))
            self._slot_edge = np.concatenate([self._slot_edge, es])
            self._slot_flip = np.concatenate([self._slot_flip, fl])
            self.coff = np.append(self.coff, self.coff[-1] + len(es))
            self.cmsg = np.concatenate([self.cmsg, np.zeros(int((self.eoff[es + 1] - self.eoff[es]).sum()))])
        self._rebuild()

    def _cycle_msgs(self, i):
        out = []
        for s in range(self.coff[i], self.coff[i + 1]):
            e = self._slot_edge[s]
            out.append((e, self.slot_moff[s], self.eoff[e + 1] - self.eoff[e]))
        return out

    def removal_change(self, i):
        """Bound change if cycle ``i`` were removed (its messages folded back into its edges)."""
        cm, se, sm, sku, skv, sf, co = self._args()
        sub = slice(co[i], co[i + 1])
        cmax = K.cycles_max(
            cm,
            sm[sub],
            self.edge_fin,
            se[sub],
            sku[sub],
            skv[sub],
            sf[sub],
            np.array([0, co[i + 1] - co[i]], dtype=np.int64),
            self.kmax,
        )[0]
        change = -cmax
        for e, mo, size in self._cycle_msgs(i):
            cur = self.th_edge[self.eoff[e] : self.eoff[e] + size]
            change += np.max(
                cur + np.where(self.edge_fin[self.eoff[e] : self.eoff[e] + size], self.cmsg[mo : mo + size], 0.0)
            ) - np.max(cur)
        return float(change)

    def remove_cycle(self, i):
        """Fold cycle ``i``'s messages back into its edges (theta^phi_e += phi_{C,e}) and drop it."""
        for e, mo, size in self._cycle_msgs(i):
            fin = self.edge_fin[self.eoff[e] : self.eoff[e] + size]
            self.th_edge[self.eoff[e] : self.eoff[e] + size] += np.where(fin, self.cmsg[mo : mo + size], 0.0)
        keep = np.ones(len(self._slot_edge), dtype=bool)
        keep[self.coff[i] : self.coff[i + 1]] = False
        msg_keep = np.ones(len(self.cmsg), dtype=bool)
        for _, mo, size in self._cycle_msgs(i):
            msg_keep[mo : mo + size] = False
        lengths = np.diff(self.coff)
        self.cmsg = self.cmsg[msg_keep]
        self._slot_edge = self._slot_edge[keep]
        self._slot_flip = self._slot_flip[keep]
        self.coff = np.concatenate([[0], np.cumsum(np.delete(lengths, i))]).astype(np.int64)
        del self.cycles[i]
        self._rebuild()

    # -- active states and separation -----------------------------------------------------
    def node_tables(self, flat=None):
        flat = self.th_node if flat is None else flat
        return [flat[self.noff[v] : self.noff[v + 1]] for v in range(len(self.n_states))]

    def edge_tables(self, flat=None):
        flat = self.th_edge if flat is None else flat
        return [
            flat[self.eoff[e] : self.eoff[e + 1]].reshape(self.n_states[u], self.n_states[v])
            for e, (u, v) in enumerate(self.edges)
        ]

    def active(self, tol):
        """Active states within ``tol`` of each maximum: flat bool arrays (nodes, edges)."""
        node_act = np.zeros(len(self.th_node), dtype=bool)
        for v in range(len(self.n_states)):
            t = self.th_node[self.noff[v] : self.noff[v + 1]]
            node_act[self.noff[v] : self.noff[v + 1]] = t >= t.max() - tol
        edge_act = np.zeros(len(self.th_edge), dtype=bool)
        for e in range(len(self.edges)):
            t = self.th_edge[self.eoff[e] : self.eoff[e + 1]]
            edge_act[self.eoff[e] : self.eoff[e + 1]] = t >= t.max() - tol
        return node_act, edge_act

    def cycle_values(self):
        """Per added cycle: (max of theta^phi_C, list of its slot max-marginals in edge layout)."""
        cm, se, sm, sku, skv, sf, co = self._args()
        out = []
        for c in range(len(self.cycles)):
            s0, length = co[c], co[c + 1] - co[c]
            mms = []
            for j in range(length):
                buf = np.empty(sku[s0 + j] * skv[s0 + j])
                K.slot_maxmarginal(cm, sm, self.edge_fin, se, sku, skv, sf, s0, length, j, self.kmax, buf)
                mms.append(buf)
            out.append((float(mms[0].max()), mms))
        return out

    def cycle_value_at(self, c, labels_of_nodes):
        """``theta^phi_C(x_C)`` of added cycle ``c`` at the node labels (in cycle order)."""
        total = 0.0
        x = list(labels_of_nodes) + [labels_of_nodes[0]]
        for j, s in enumerate(range(self.coff[c], self.coff[c + 1])):
            e = self._slot_edge[s]
            xu, xv = (x[j], x[j + 1]) if self._slot_flip[s] == 0 else (x[j + 1], x[j])
            i = xu * self.n_states[self.ev[e]] + xv
            if not self.edge_fin[self.eoff[e] + i]:
                return -np.inf
            total += self.cmsg[self.slot_moff[s] + i]
        return total

    def separation(self, candidates, node_act, edge_act):
        """Sec. 1.4.5 on zero cycles: (CSP of active states on the cycle unsatisfiable, gap of (42)).

        Returns two ndarrays of shape (n_candidates,): bool and float.
        """
        if not candidates:
            return np.zeros(0, dtype=bool), np.zeros(0)
        slot_edge, (te, ku, kv, fl, coff) = self._candidate_layout(candidates)
        gap_total = K.cycles_max(self.th_edge, te, self.edge_fin, te, ku, kv, fl, coff, self.kmax)
        emax = np.array([self.th_edge[self.eoff[e] : self.eoff[e + 1]].max() for e in range(len(self.edges))])
        sums = np.add.reduceat(emax[slot_edge], coff[:-1])
        gap = sums - gap_total
        # the CSP restricted to the cycle: active edge pairs whose two node states are active too
        allowed = edge_act.copy()
        for e, (u, v) in enumerate(self.edges):
            nu = node_act[self.noff[u] : self.noff[u + 1]]
            nv = node_act[self.noff[v] : self.noff[v + 1]]
            allowed[self.eoff[e] : self.eoff[e + 1]] &= np.outer(nu, nv).ravel()
        zeros = np.zeros_like(self.th_edge)
        sat = K.cycles_max(zeros, te, allowed, te, ku, kv, fl, coff, self.kmax) > -np.inf
        return ~sat, gap

    def value(self, labels):
        """Objective (31) of a labelling on the original weights."""
        labels = np.asarray(labels, dtype=np.int64)
        val = self.th0_node[self.noff[:-1] + labels].sum() if len(labels) else 0.0
        if len(self.edges):
            idx = self.eoff[:-1] + labels[self.eu] * self.n_states[self.ev] + labels[self.ev]
            val += self.th0_edge[idx].sum()
        return float(val)
