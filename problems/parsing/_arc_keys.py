"""Packed keys of arc features: the template compiler and the numba kernels behind
:class:`problems.parsing.features.ArcFeaturizer` (moved here from that module).

A key packs ``(template, direction, distance, atom values)`` exactly into an int64: the atom
values in the low ``_VALUE_BITS`` bits, then 4 bits of binned distance and 1 bit of direction,
and the template index from bit ``_TOP`` up. :func:`_parse_template` reads a template's atoms,
:func:`_compile_templates` turns the parsed templates into the arrays :func:`_arc_keys` reads;
:func:`_build_table` and :func:`_lookup` are the exact open-addressing hash table of the fitted
keys.
"""
from __future__ import annotations

import re

import numpy as np
from numba import njit

from cutplane.exceptions import InputError

_ATOM = re.compile(r"^([hm])([wlp])([+-][12])?$")
_COL = {"w": 0, "l": 1, "p": 2}
_VALUE_BITS = 48   # atom values; then 4 bits distance, 1 bit direction, 10 bits template
_TOP = 53
_MAX_TEMPLATES = 1024

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _build_table(keys):
    """Open-addressing hash table (linear probing) of unique keys -> their rank.

    Returns ``(table, bits)``: ``table`` of shape (2**bits, 2), rows ``(key, rank)``, key -1
    for an empty slot (keys are non-negative); at most half full.
    """
    bits = 1
    while (1 << bits) < 2 * keys.shape[0]:
        bits += 1
    size = 1 << bits
    table = np.full((size, 2), -1, dtype=np.int64)
    shift = np.uint64(64 - bits)
    for j in range(keys.shape[0]):
        slot = np.int64((np.uint64(keys[j]) * _GOLDEN) >> shift)
        while table[slot, 0] != -1:
            slot = (slot + 1) & (size - 1)
        table[slot, 0] = keys[j]
        table[slot, 1] = j
    return table, bits


@njit(cache=True, nogil=True)
def _lookup(table, bits, key):
    """Rank of ``key`` in the fitted keys, or -1."""
    size = table.shape[0]
    slot = np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(64 - bits))
    while True:
        k = table[slot, 0]
        if k == key:
            return table[slot, 1]
        if k == -1:
            return -1
        slot = (slot + 1) & (size - 1)


@njit(cache=True, nogil=True)
def _push(buf, k, val):
    """Append ``val`` at ``buf[k]``, doubling the buffer when full; returns the buffer."""
    if k == buf.shape[0]:
        bigger = np.empty(2 * buf.shape[0] + 16, dtype=buf.dtype)
        bigger[:k] = buf[:k]
        buf = bigger
    buf[k] = val
    return buf


@njit(cache=True, nogil=True)
def _arc_keys(T, row_ptr, lengths, heads, head_ptr, gold_only, a_col, a_anchor, a_off, a_shift,
              natoms, bshift, conj, n_pos, lookup, table, bits):
    """Feature keys (or fitted ids) of the arcs of a batch of sentences, in one pass.

    Arcs are all ``(h, m)`` of each sentence in row-major order (``gold_only`` False; arcs
    into the root and self-loops get nothing) or the gold arc of each word (True). With
    ``lookup`` each key is replaced by its rank in the hash table and keys absent from it
    are dropped. Returns ``(counts per arc, keys or ids)``.
    """
    n_sent = lengths.shape[0]
    n_arcs = 0
    for i in range(n_sent):
        n_arcs += lengths[i] if gold_only else (lengths[i] + 1) * (lengths[i] + 1)
    counts = np.zeros(n_arcs, dtype=np.int64)
    out = np.empty(16 * n_arcs + 16, dtype=np.int64)
    stamp = np.zeros(n_pos, dtype=np.int64)
    cur = 0
    n_t = natoms.shape[0]
    k = 0
    a = 0
    for i in range(n_sent):
        n = lengths[i]
        N = n + 1
        r0 = row_ptr[i]
        n_iter = n if gold_only else N * N
        for it in range(n_iter):
            if gold_only:
                m = it + 1
                h = heads[head_ptr[i] + m]
            else:
                h = it // N
                m = it % N
            if m == 0 or h == m:
                a += 1
                continue
            d = h - m if h > m else m - h
            dbin = 10 if d > 10 else (5 if d > 5 else d)
            dirn = 1 if h > m else 0
            k0 = k
            for t in range(n_t):
                base = t << _TOP
                if conj[t]:
                    base |= (dirn << 52) | (dbin << _VALUE_BITS)
                for j in range(natoms[t]):
                    p = (h if a_anchor[t, j] == 0 else m) + a_off[t, j]
                    if p < -1:
                        p = -1
                    elif p > n + 1:
                        p = n + 1
                    base |= T[r0 + p + 1, a_col[t, j]] << a_shift[t, j]
                if bshift[t] < 0:
                    val = _lookup(table, bits, base) if lookup else base
                    if val >= 0:
                        out = _push(out, k, val)
                        k += 1
                else:
                    cur += 1
                    for p in range(min(h, m) + 1, max(h, m)):
                        v = T[r0 + p + 1, 2]
                        if stamp[v] != cur:
                            stamp[v] = cur
                            key = base | (v << bshift[t])
                            val = _lookup(table, bits, key) if lookup else key
                            if val >= 0:
                                out = _push(out, k, val)
                                k += 1
            counts[a] = k - k0
            a += 1
    return counts, out[:k].copy()


def _parse_template(spec: str, name: str):
    atoms = [a for a in re.split(r"[_\s]+", spec.strip()) if a]
    out = []
    for a in atoms:
        if a == "bp":
            out.append(("b", 2, 0, 0))
            continue
        mt = _ATOM.match(a)
        if mt is None:
            raise InputError(f"bad atom {a!r} in template {name!r}; expected h|m followed by "
                             "w|l|p and an optional offset +1/-1/+2/-2, or bp", field="templates")
        anchor, col, off = mt.groups()
        out.append(("a", _COL[col], 0 if anchor == "h" else 1, int(off or 0)))
    if sum(1 for a in out if a[0] == "b") > 1:
        raise InputError(f"template {name!r} has more than one bp atom", field="templates")
    return out


def _template_specs(templates, distance):
    """Parsed templates ``(name, atoms, conjoined)``: with ``distance="both"`` each twice."""
    items = list(templates.items()) if isinstance(templates, dict) \
        else [(t, t) for t in templates]
    if not items:
        raise InputError("no templates", field="templates")
    specs = []
    for name, spec in items:
        atoms = _parse_template(spec, name)
        if distance in (True, "both"):
            specs.append((name, atoms, True))
        if distance in (False, "both"):
            specs.append((name + "/nd" if distance == "both" else name, atoms, False))
    names = [s[0] for s in specs]
    if len(set(names)) != len(names):
        raise InputError("duplicate template names", field="templates")
    if len(specs) > _MAX_TEMPLATES:
        raise InputError(f"at most {_MAX_TEMPLATES} templates, got {len(specs)}", field="templates")
    return specs


def _compile_templates(specs, bits):
    """Atom tables of parsed templates ``(name, atoms, conjoined)`` for :func:`_arc_keys`."""
    T = len(specs)
    A = max(1, max(len(a) for _, a, _ in specs))
    a_col = np.zeros((T, A), np.int64)
    a_anchor = np.zeros((T, A), np.int64)
    a_off = np.zeros((T, A), np.int64)
    a_shift = np.zeros((T, A), np.int64)
    natoms = np.zeros(T, np.int64)
    bshift = np.full(T, -1, np.int64)
    conj = np.zeros(T, np.bool_)
    colkey = "wlp"
    for t, (name, atoms, cj) in enumerate(specs):
        shift = 0
        j = 0
        for kind, col, anchor, off in atoms:
            width = bits[colkey[col]]
            if kind == "b":
                bshift[t] = shift
            else:
                a_col[t, j], a_anchor[t, j], a_off[t, j], a_shift[t, j] = col, anchor, off, shift
                j += 1
            shift += width
        if shift > _VALUE_BITS:
            raise InputError(f"template {name!r} needs {shift} bits for its atom values, more than "
                             f"{_VALUE_BITS}; raise word_min_count to shrink the vocabularies",
                             field="templates")
        natoms[t] = j
        conj[t] = cj
    return a_col, a_anchor, a_off, a_shift, natoms, bshift, conj
