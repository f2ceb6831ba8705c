"""Arc features for dependency parsing in the style of MSTParser, grouped by template.

A *template* is a conjunction of *atoms* read off a candidate arc ``h -> m`` of a sentence
(McDonald, Crammer & Pereira 2005; MTL^struct sec. 3.4; SPOM sec. 4.2):

=========  ==================================================================
atom       meaning
=========  ==================================================================
``hw``     head word form (``mw``: modifier)
``hl``     head lemma (``ml``)
``hp``     head POS (``mp``); UPOS or XPOS (``pos=``)
``hp-1``   POS of the word before the head (``hp+1`` after; ``mp-1``, ``mp+1``;
           offsets up to 2, also for ``w`` and ``l``)
``bp``     POS of a word strictly between head and modifier: one feature per
           *distinct* POS in between (MSTParser's in-between trigram with
           ``hp`` and ``mp``)
=========  ==================================================================

A template is written as its atoms joined by ``_`` (``"hp_hp+1_mp-1_mp"``); an empty
template ``""`` fires on every arc (with the direction/distance conjunction it is the
direction-distance bias). Every template is conjoined with the attachment direction and the
binned distance ``|h - m|``: 1, 2, 3, 4, 5 stay, 6..10 -> 5, > 10 -> 10 (MTL^struct sec. 3.4);
``distance="both"`` also adds each template without the conjunction (as MSTParser does), as a
separate template ``name + "/nd"``. The root (position 0) has the word, lemma and POS
``<root>``; positions before it and after the last word read ``<s>`` / ``</s>``.

Every feature belongs to exactly one template: a feature is the key
``(template, direction, distance, atom values)``, packed exactly (no hashing) into an
int64 whose top bits are the template index, so sorting the kept keys groups the weight
vector by template and :meth:`ArcFeaturizer.coordinate_groups` is non-decreasing.

As in MSTParser the feature set is, by default, the features of the *gold* arcs of the
training sentences (``feature_source="gold"``); ``"all"`` takes every candidate arc.
Features seen fewer than ``min_count`` times are dropped; at transform time, features
outside the fitted set are ignored. The transform covers all ``(n+1)^2`` arcs of every
sentence (the decoders need them), stored as :class:`oracles.parse_oracle.ArcFeatures`
(CSR over arcs, int32 ids), in chunks of sentences to bound the peak memory; keys are
looked up in an open-addressing hash table that stores the full keys, so the lookup is
exact too.

Key layout: a key packs ``(template, direction, distance, atom values)`` exactly into an
int64: the atom values in the low ``_VALUE_BITS`` bits, then 4 bits of binned distance and 1
bit of direction, and the template index from bit ``_TOP`` up. :func:`_parse_template` reads
a template's atoms, :func:`_compile_templates` turns the parsed templates into the arrays
:func:`_arc_keys` reads; :func:`_build_table` and :func:`_lookup` are the exact
open-addressing hash table of the fitted keys. :func:`parse_arc_templates` reads template
text (``name = atoms`` per line).
"""

from __future__ import annotations

import re

import numpy as np
from numba import njit
from sklearn.exceptions import NotFittedError

from cutplane.exceptions import InputError, ModelFormatError
from oracles.parse_oracle import ArcFeatures

__all__ = ["DEFAULT_TEMPLATES", "ArcFeaturizer", "distance_bin", "parse_arc_templates"]

DEFAULT_TEMPLATES: dict[str, str] = {
    # uni-gram (McDonald et al. 2005, Table 1a)
    "hw_hp": "hw_hp",
    "hw": "hw",
    "hp": "hp",
    "mw_mp": "mw_mp",
    "mw": "mw",
    "mp": "mp",
    # bi-gram (Table 1b)
    "hw_hp_mw_mp": "hw_hp_mw_mp",
    "hp_mw_mp": "hp_mw_mp",
    "hw_mw_mp": "hw_mw_mp",
    "hw_hp_mp": "hw_hp_mp",
    "hw_hp_mw": "hw_hp_mw",
    "hw_mw": "hw_mw",
    "hp_mp": "hp_mp",
    # in-between POS and surrounding POS (Table 1c)
    "between_pos": "hp_bp_mp",
    "hp_hp+1_mp-1_mp": "hp_hp+1_mp-1_mp",
    "hp-1_hp_mp-1_mp": "hp-1_hp_mp-1_mp",
    "hp_hp+1_mp_mp+1": "hp_hp+1_mp_mp+1",
    "hp-1_hp_mp_mp+1": "hp-1_hp_mp_mp+1",
    # lemmas (MTL^struct sec. 3.4, SPOM sec. 4.2)
    "hl": "hl",
    "ml": "ml",
    "hl_ml": "hl_ml",
    "hl_mp": "hl_mp",
    "hp_ml": "hp_ml",
    # direction and distance alone
    "dist": "",
}

# ----------------------------------------------------------------- packed keys
_ATOM = re.compile(r"^([hm])([wlp])([+-][12])?$")
_COL = {"w": 0, "l": 1, "p": 2}
_VALUE_BITS = 48  # atom values; then 4 bits distance, 1 bit direction, 10 bits template
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
def _arc_keys(
    T,
    row_ptr,
    lengths,
    heads,
    head_ptr,
    gold_only,
    a_col,
    a_anchor,
    a_off,
    a_shift,
    natoms,
    bshift,
    conj,
    n_pos,
    lookup,
    table,
    bits,
):
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
            raise InputError(
                f"bad atom {a!r} in template {name!r}; expected h|m followed by "
                "w|l|p and an optional offset +1/-1/+2/-2, or bp",
                field="templates",
            )
        anchor, col, off = mt.groups()
        out.append(("a", _COL[col], 0 if anchor == "h" else 1, int(off or 0)))
    if sum(1 for a in out if a[0] == "b") > 1:
        raise InputError(f"template {name!r} has more than one bp atom", field="templates")
    return out


def _template_specs(templates, distance):
    """Parsed templates ``(name, atoms, conjoined)``: with ``distance="both"`` each twice."""
    items = list(templates.items()) if isinstance(templates, dict) else [(t, t) for t in templates]
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
            raise InputError(
                f"template {name!r} needs {shift} bits for its atom values, more than "
                f"{_VALUE_BITS}; raise word_min_count to shrink the vocabularies",
                field="templates",
            )
        natoms[t] = j
        conj[t] = cj
    return a_col, a_anchor, a_off, a_shift, natoms, bshift, conj


# ------------------------------------------------------------------ featurizer
_SPECIAL = ("<unk>", "<root>", "<s>", "</s>")  # ids 0..3 of every vocabulary


def distance_bin(d):
    """MTL^struct's distance bins: 1..5 unchanged, 6..10 -> 5, more than 10 -> 10."""
    d = np.asarray(d)
    return np.where(d > 10, 10, np.where(d > 5, 5, d))


class ArcFeaturizer:
    """MSTParser-style arc features grouped by template (see the module docstring).

    Parameters
    ----------
    templates : dict of str to str, or sequence of str, optional
        Template name -> atoms (``"hp_bp_mp"``); a sequence uses each spec as its name.
        Default :data:`DEFAULT_TEMPLATES` (24 templates).
    pos : {"upos", "xpos"}, default "upos"
        Which POS column the ``p`` atoms read.
    distance : bool or "both", default True
        Conjoin every template with direction and binned distance; "both" adds the
        unconjoined copies as templates ``name + "/nd"``.
    min_count : int, default 1
        Drop features seen fewer times in the fitted sentences.
    feature_source : {"gold", "all"}, default "gold"
        Count features on gold arcs only (MSTParser) or on every candidate arc.
    lowercase : bool, default False
        Lowercase word forms and lemmas.
    word_min_count : int, default 1
        Word forms and lemmas seen fewer times map to ``<unk>`` (smaller keys).
    chunk_size : int, default 256
        Sentences per batch in fit / transform.

    Attributes
    ----------
    template_names_ : list of str
    keys_ : ndarray of shape (dim,), int64
        Sorted packed keys of the kept features; weight ``j`` is feature ``keys_[j]``.
    dim_ : int
    vocab_ : dict
        ``{"w": {...}, "l": {...}, "p": {...}}`` string -> id.
    columns_ : ndarray of int
        Only on a featurizer made by :meth:`restrict`: the columns of the original's features it
        keeps.
    """

    columns_: np.ndarray  # set by restrict() on the featurizer it returns

    def __init__(
        self,
        templates=None,
        *,
        pos: str = "upos",
        distance=True,
        min_count: int = 1,
        feature_source: str = "gold",
        lowercase: bool = False,
        word_min_count: int = 1,
        chunk_size: int = 256,
    ):
        self.templates = DEFAULT_TEMPLATES if templates is None else templates
        self.pos = pos
        self.distance = distance
        self.min_count = min_count
        self.feature_source = feature_source
        self.lowercase = lowercase
        self.word_min_count = word_min_count
        self.chunk_size = chunk_size

    # -- fitting ------------------------------------------------------------------------
    def _check_params(self):
        if self.pos not in ("upos", "xpos"):
            raise InputError(f"pos must be 'upos' or 'xpos', got {self.pos!r}", field="pos")
        if self.distance not in (True, False, "both"):
            raise InputError(f"distance must be True, False or 'both', got {self.distance!r}", field="distance")
        if self.feature_source not in ("gold", "all"):
            raise InputError(
                f"feature_source must be 'gold' or 'all', got {self.feature_source!r}", field="feature_source"
            )
        for name in ("min_count", "word_min_count", "chunk_size"):
            if int(getattr(self, name)) < 1:
                raise InputError(f"{name} must be >= 1, got {getattr(self, name)}", field=name)
        return _template_specs(self.templates, self.distance)

    def _columns(self, s):
        forms = s.forms
        lemmas = s.lemmas
        if self.lowercase:
            forms = [f.lower() for f in forms]
            lemmas = [x.lower() for x in lemmas]
        return forms, lemmas, (s.upos if self.pos == "upos" else s.xpos)

    def fit(self, sentences, y=None):
        """Build vocabularies and the feature set from training sentences.

        Parameters
        ----------
        sentences : sequence of sentences
            Objects with ``forms``, ``lemmas``, ``upos``, ``xpos`` (lists of str) and, for
            ``feature_source="gold"``, ``heads`` (shape (n,), 0 = root), e.g.
            :class:`problems.io.conllu.ConlluSentence`.
        y : ignored

        Returns
        -------
        self
        """
        specs = self._check_params()
        sentences = list(sentences)
        if not sentences:
            raise InputError("no training sentences", field="sentences")
        counts: dict[str, dict[str, int]] = {"w": {}, "l": {}, "p": {}}
        for s in sentences:
            for key, col in zip("wlp", self._columns(s)):
                seen = counts[key]
                for v in col:
                    seen[v] = seen.get(v, 0) + 1
        self.vocab_ = {}
        for key in "wlp":
            thr = 1 if key == "p" else int(self.word_min_count)
            kept = sorted(v for v, c in counts[key].items() if c >= thr)
            self.vocab_[key] = {v: i for i, v in enumerate(_SPECIAL + tuple(kept))}
        bits = {k: max(1, (len(v) - 1).bit_length()) for k, v in self.vocab_.items()}
        self._tables = self._compile(specs, bits)
        self.template_names_ = [s[0] for s in specs]
        gold = self.feature_source == "gold"
        uniq = np.empty(0, np.int64)
        freq = np.empty(0, np.int64)
        for start in range(0, len(sentences), int(self.chunk_size)):
            batch = sentences[start : start + int(self.chunk_size)]
            _, keys = self._keys(batch, gold_only=gold)
            k, c = np.unique(keys, return_counts=True)
            uniq, inv = np.unique(np.concatenate((uniq, k)), return_inverse=True)
            freq = np.bincount(inv, weights=np.concatenate((freq, c)), minlength=uniq.size).astype(np.int64)
        self.keys_ = uniq[freq >= int(self.min_count)]
        self.dim_ = int(self.keys_.shape[0])
        self._hash = _build_table(self.keys_)
        return self

    _compile = staticmethod(_compile_templates)

    def _encode(self, sentences):
        """Token id tables: rows -1..n+1 of every sentence stacked, columns (w, l, p)."""
        rows = []
        row_ptr = [0]
        lengths = []
        for s in sentences:
            forms, lemmas, pos = self._columns(s)
            n = len(forms)
            if len(lemmas) != n or len(pos) != n:
                raise InputError("a sentence has columns of different lengths", field="sentences")
            t = np.empty((n + 3, 3), np.int64)
            t[0] = 2
            t[1] = 1
            t[n + 2] = 3
            for j, (key, col) in enumerate(zip("wlp", (forms, lemmas, pos))):
                voc = self.vocab_[key]
                t[2 : n + 2, j] = [voc.get(v, 0) for v in col]
            rows.append(t)
            row_ptr.append(row_ptr[-1] + n + 3)
            lengths.append(n)
        return (np.concatenate(rows), np.asarray(row_ptr, np.int64), np.asarray(lengths, np.int64))

    def _keys(self, sentences, gold_only, lookup=False):
        T, row_ptr, lengths = self._encode(sentences)
        if gold_only:
            trees = []
            for s in sentences:
                if getattr(s, "heads", None) is None:
                    raise InputError(
                        "feature_source='gold' needs gold heads for every training sentence", field="heads"
                    )
                trees.append(np.concatenate(([-1], np.asarray(s.heads, np.int64))))
            heads = np.concatenate(trees)
        else:
            heads = np.full(int(lengths.sum() + lengths.size), -1, np.int64)
        head_ptr = np.concatenate(([0], np.cumsum(lengths + 1)))
        table, bits = self._hash if lookup else (np.full((2, 2), -1, np.int64), 1)
        a_col, a_anchor, a_off, a_shift, natoms, bshift, conj = self._tables
        return _arc_keys(
            T,
            row_ptr,
            lengths,
            heads,
            head_ptr,
            gold_only,
            a_col,
            a_anchor,
            a_off,
            a_shift,
            natoms,
            bshift,
            conj,
            len(self.vocab_["p"]),
            lookup,
            table,
            bits,
        )

    # -- transforming -------------------------------------------------------------------
    def transform(self, sentences) -> ArcFeatures:
        """Arc features of all candidate arcs of ``sentences`` (heads not needed).

        Returns
        -------
        ArcFeatures
            ``dim = self.dim_``; features outside the fitted set are left out.
        """
        if not hasattr(self, "keys_"):
            raise NotFittedError("ArcFeaturizer is not fitted; call fit first")
        sentences = list(sentences)
        indptr_parts: list[np.ndarray] = []
        index_parts: list[np.ndarray] = []
        n_words: list[int] = []
        offset = 0
        for start in range(0, len(sentences), int(self.chunk_size)):
            batch = sentences[start : start + int(self.chunk_size)]
            counts, ids = self._keys(batch, gold_only=False, lookup=True)
            index_parts.append(ids.astype(np.int32))
            indptr_parts.append(offset + np.cumsum(counts))
            offset += int(counts.sum())
            n_words.extend(len(s.forms) for s in batch)
        lengths = np.asarray(n_words, np.int64)
        indptr = np.concatenate([np.zeros(1, np.int64), *indptr_parts]).astype(np.int64)
        indices = np.concatenate(index_parts) if index_parts else np.empty(0, np.int32)
        arc_ptr = np.concatenate((np.zeros(1, np.int64), np.cumsum((lengths + 1) ** 2)))
        return ArcFeatures(lengths, arc_ptr, indptr, indices, self.dim_)

    def fit_transform(self, sentences, y=None) -> ArcFeatures:
        """``fit(sentences).transform(sentences)``."""
        sentences = list(sentences)
        return self.fit(sentences).transform(sentences)

    # -- groups -------------------------------------------------------------------------
    def coordinate_groups(self) -> np.ndarray:
        """Template index of every weight: ndarray of shape (dim,), int64, non-decreasing."""
        if not hasattr(self, "keys_"):
            raise NotFittedError("ArcFeaturizer is not fitted; call fit first")
        return (self.keys_ >> _TOP).astype(np.int64)

    def group_sizes(self) -> np.ndarray:
        """Number of kept features per template: ndarray of shape (n_templates,)."""
        return np.bincount(self.coordinate_groups(), minlength=len(self.template_names_))

    # -- restriction and persistence ----------------------------------------------------
    def _specs(self):
        specs = self._check_params()
        if [s[0] for s in specs] != list(self.template_names_):
            raise InputError("the templates changed since fit", field="templates")
        return specs

    def restrict(self, names) -> ArcFeaturizer:
        """A fitted featurizer that extracts only the templates ``names`` (others never built).

        Parameters
        ----------
        names : iterable of str
            Template names (``template_names_``) to keep; the order of the fitted templates
            is kept.

        Returns
        -------
        ArcFeaturizer
            Its :meth:`transform` gives ids in ``0..len(columns_)-1``; attribute ``columns_``
            (ndarray of shape ``(dim_,)``, int64) maps them to this featurizer's ids, so
            ``transform`` of the restricted featurizer with weights ``w[columns_]`` scores
            every arc as ``w`` does, minus the features of the dropped templates.
        """
        if not hasattr(self, "keys_"):
            raise NotFittedError("ArcFeaturizer is not fitted; call fit first")
        specs = self._specs()
        wanted = set(names)
        unknown = wanted - set(self.template_names_)
        if unknown:
            raise InputError(f"unknown templates {sorted(unknown)}", field="templates")
        keep = [t for t, s in enumerate(specs) if s[0] in wanted]
        old_t = self.keys_ >> _TOP
        new_id = np.full(len(specs), -1, np.int64)
        new_id[keep] = np.arange(len(keep))
        columns = np.flatnonzero(new_id[old_t] >= 0).astype(np.int64)
        low = self.keys_[columns] & ((np.int64(1) << _TOP) - 1)
        sub = ArcFeaturizer(
            self.templates,
            pos=self.pos,
            distance=self.distance,
            min_count=self.min_count,
            feature_source=self.feature_source,
            lowercase=self.lowercase,
            word_min_count=self.word_min_count,
            chunk_size=self.chunk_size,
        )
        sub.vocab_ = self.vocab_
        sub.template_names_ = [specs[t][0] for t in keep]
        bits = {k: max(1, (len(v) - 1).bit_length()) for k, v in self.vocab_.items()}
        sub._tables = self._compile([specs[t] for t in keep], bits) if keep else self._compile(specs[:1], bits)
        if not keep:  # nothing to extract: a template list that matches no key
            sub._tables = tuple(a[:0] for a in sub._tables)
        sub.keys_ = low | (new_id[old_t[columns]] << _TOP)
        sub.dim_ = int(columns.shape[0])
        sub._hash = _build_table(sub.keys_)
        sub.columns_ = columns
        return sub

    def get_state(self):
        """The fitted state as arrays and JSON metadata (for model files; no pickle).

        Returns
        -------
        arrays : dict of str to ndarray
            ``keys`` (int64, shape ``(dim_,)``) and the vocabularies ``vocab_w``, ``vocab_l``,
            ``vocab_p`` (unicode, in id order).
        meta : dict
            Constructor parameters and ``template_names``.
        """
        if not hasattr(self, "keys_"):
            raise NotFittedError("ArcFeaturizer is not fitted; call fit first")
        arrays = {"keys": np.asarray(self.keys_, np.int64)}
        for key in "wlp":
            voc = self.vocab_[key]
            arrays["vocab_" + key] = np.array(sorted(voc, key=voc.__getitem__), dtype=str)
        # name/spec pairs, not a JSON object: the order of the templates is their group id
        items = (
            [[str(k), str(v)] for k, v in self.templates.items()]
            if isinstance(self.templates, dict)
            else [str(t) for t in self.templates]
        )
        meta = {
            "templates": items,
            "pos": self.pos,
            "distance": self.distance,
            "min_count": int(self.min_count),
            "feature_source": self.feature_source,
            "lowercase": bool(self.lowercase),
            "word_min_count": int(self.word_min_count),
            "chunk_size": int(self.chunk_size),
            "template_names": list(self.template_names_),
        }
        return arrays, meta

    @classmethod
    def from_state(cls, arrays, meta, *, path=None) -> ArcFeaturizer:
        """Rebuild a fitted featurizer from :meth:`get_state`; inconsistencies raise
        :class:`~cutplane.exceptions.ModelFormatError`."""
        try:
            params = {
                k: meta[k]
                for k in (
                    "templates",
                    "pos",
                    "distance",
                    "min_count",
                    "feature_source",
                    "lowercase",
                    "word_min_count",
                    "chunk_size",
                )
            }
            names = list(meta["template_names"])
            keys = np.asarray(arrays["keys"])
            vocabs = {k: [str(s) for s in arrays["vocab_" + k]] for k in "wlp"}
        except (KeyError, TypeError) as exc:
            raise ModelFormatError(f"featurizer state lacks {exc}", path=path, field="featurizer") from None
        try:
            tpl = params["templates"]
            if tpl and all(isinstance(t, (list, tuple)) and len(t) == 2 for t in tpl):
                params["templates"] = {str(k): str(v) for k, v in tpl}
            est = cls(**params)
            specs = est._check_params()
        except (InputError, TypeError) as exc:
            raise ModelFormatError(f"bad featurizer templates: {exc}", path=path, field="templates") from None
        if [s[0] for s in specs] != names:
            raise ModelFormatError("template names do not match the templates", path=path, field="template_names")
        if (
            keys.dtype != np.int64
            or keys.ndim != 1
            or np.any(np.diff(keys) <= 0)
            or (keys.size and (keys[0] < 0 or (keys[-1] >> _TOP) >= len(specs)))
        ):
            raise ModelFormatError(
                "feature keys must be strictly increasing int64 of known templates", path=path, field="keys"
            )
        est.vocab_ = {}
        for k in "wlp":
            voc = vocabs[k]
            if tuple(voc[: len(_SPECIAL)]) != _SPECIAL or len(set(voc)) != len(voc):
                raise ModelFormatError(f"vocabulary {k!r} is malformed", path=path, field="vocab_" + k)
            est.vocab_[k] = {v: i for i, v in enumerate(voc)}
        bits = {k: max(1, (len(v) - 1).bit_length()) for k, v in est.vocab_.items()}
        est._tables = est._compile(specs, bits)
        est.template_names_ = names
        est.keys_ = keys
        est.dim_ = int(keys.shape[0])
        est._hash = _build_table(keys)
        return est


def parse_arc_templates(text, *, path=None) -> dict:
    """Arc templates from text: ``name = atoms`` or ``atoms`` per line, ``#`` comments.

    Parameters
    ----------
    text : str
    path : str or os.PathLike, optional
        The file the text came from, for error messages.

    Returns
    -------
    dict of str to str
        Template name -> atoms (``"hp_bp_mp"``; ``""`` is the direction-distance bias and
        needs a name: ``dist =``).
    """
    out = {}
    for lineno, raw in enumerate(str(text).splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, eq, spec = line.partition("=")
        name, spec = name.strip(), spec.strip()
        if not eq:
            spec = name
        if not name or any(c.isspace() for c in name):
            raise InputError(
                f"bad template line {raw.strip()!r}; expected 'name = atoms' or 'atoms'",
                path=path,
                line=lineno,
                field="templates",
            )
        if name in out:
            raise InputError(f"duplicate template name {name!r}", path=path, line=lineno, field="templates")
        try:
            ArcFeaturizer({name: spec})._check_params()
        except InputError as exc:
            raise InputError(exc.message, path=path, line=lineno, field="templates") from None
        out[name] = spec
    if not out:
        raise InputError("no templates", path=path, field="templates")
    return out
