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
exact too. The template parser and compiler, the key layout and the numba kernels (key
extraction, hash table) live in the private module ``problems.parsing._arc_keys``.
"""
from __future__ import annotations

import numpy as np

from cutplane.exceptions import InputError, ModelFormatError
from oracles.parse_oracle import ArcFeatures

from problems.parsing._arc_keys import _TOP, _arc_keys, _build_table, _compile_templates, _template_specs

__all__ = ["DEFAULT_TEMPLATES", "ArcFeaturizer", "distance_bin"]

DEFAULT_TEMPLATES: dict[str, str] = {
    # uni-gram (McDonald et al. 2005, Table 1a)
    "hw_hp": "hw_hp", "hw": "hw", "hp": "hp",
    "mw_mp": "mw_mp", "mw": "mw", "mp": "mp",
    # bi-gram (Table 1b)
    "hw_hp_mw_mp": "hw_hp_mw_mp", "hp_mw_mp": "hp_mw_mp", "hw_mw_mp": "hw_mw_mp",
    "hw_hp_mp": "hw_hp_mp", "hw_hp_mw": "hw_hp_mw", "hw_mw": "hw_mw", "hp_mp": "hp_mp",
    # in-between POS and surrounding POS (Table 1c)
    "between_pos": "hp_bp_mp",
    "hp_hp+1_mp-1_mp": "hp_hp+1_mp-1_mp", "hp-1_hp_mp-1_mp": "hp-1_hp_mp-1_mp",
    "hp_hp+1_mp_mp+1": "hp_hp+1_mp_mp+1", "hp-1_hp_mp_mp+1": "hp-1_hp_mp_mp+1",
    # lemmas (MTL^struct sec. 3.4, SPOM sec. 4.2)
    "hl": "hl", "ml": "ml", "hl_ml": "hl_ml", "hl_mp": "hl_mp", "hp_ml": "hp_ml",
    # direction and distance alone
    "dist": "",
}

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
    """

    def __init__(self, templates=None, *, pos: str = "upos", distance=True, min_count: int = 1,
                 feature_source: str = "gold", lowercase: bool = False, word_min_count: int = 1,
                 chunk_size: int = 256):
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
            raise InputError(f"distance must be True, False or 'both', got {self.distance!r}",
                             field="distance")
        if self.feature_source not in ("gold", "all"):
            raise InputError(f"feature_source must be 'gold' or 'all', got {self.feature_source!r}",
                             field="feature_source")
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
        counts = {"w": {}, "l": {}, "p": {}}
        for s in sentences:
            for key, col in zip("wlp", self._columns(s)):
                c = counts[key]
                for v in col:
                    c[v] = c.get(v, 0) + 1
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
            batch = sentences[start:start + int(self.chunk_size)]
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
                t[2:n + 2, j] = [voc.get(v, 0) for v in col]
            rows.append(t)
            row_ptr.append(row_ptr[-1] + n + 3)
            lengths.append(n)
        return (np.concatenate(rows), np.asarray(row_ptr, np.int64), np.asarray(lengths, np.int64))

    def _keys(self, sentences, gold_only, lookup=False):
        T, row_ptr, lengths = self._encode(sentences)
        if gold_only:
            heads = []
            for s in sentences:
                if getattr(s, "heads", None) is None:
                    raise InputError("feature_source='gold' needs gold heads for every training sentence",
                                     field="heads")
                heads.append(np.concatenate(([-1], np.asarray(s.heads, np.int64))))
            heads = np.concatenate(heads)
        else:
            heads = np.full(int(lengths.sum() + lengths.size), -1, np.int64)
        head_ptr = np.concatenate(([0], np.cumsum(lengths + 1)))
        table, bits = self._hash if lookup else (np.full((2, 2), -1, np.int64), 1)
        return _arc_keys(T, row_ptr, lengths, heads, head_ptr, gold_only, *self._tables,
                         len(self.vocab_["p"]), lookup, table, bits)

    # -- transforming -------------------------------------------------------------------
    def transform(self, sentences) -> ArcFeatures:
        """Arc features of all candidate arcs of ``sentences`` (heads not needed).

        Returns
        -------
        ArcFeatures
            ``dim = self.dim_``; features outside the fitted set are left out.
        """
        if not hasattr(self, "keys_"):
            raise InputError("ArcFeaturizer is not fitted; call fit first")
        sentences = list(sentences)
        indptr_parts, index_parts, lengths = [], [], []
        offset = 0
        for start in range(0, len(sentences), int(self.chunk_size)):
            batch = sentences[start:start + int(self.chunk_size)]
            counts, ids = self._keys(batch, gold_only=False, lookup=True)
            index_parts.append(ids.astype(np.int32))
            indptr_parts.append(offset + np.cumsum(counts))
            offset += int(counts.sum())
            lengths.extend(len(s.forms) for s in batch)
        lengths = np.asarray(lengths, np.int64)
        indptr = np.concatenate([[0]] + indptr_parts).astype(np.int64)
        indices = np.concatenate(index_parts) if index_parts else np.empty(0, np.int32)
        arc_ptr = np.concatenate(([0], np.cumsum((lengths + 1) ** 2)))
        return ArcFeatures(lengths, arc_ptr, indptr, indices, self.dim_)

    def fit_transform(self, sentences, y=None) -> ArcFeatures:
        """``fit(sentences).transform(sentences)``."""
        sentences = list(sentences)
        return self.fit(sentences).transform(sentences)

    # -- groups -------------------------------------------------------------------------
    def coordinate_groups(self) -> np.ndarray:
        """Template index of every weight: ndarray of shape (dim,), int64, non-decreasing."""
        if not hasattr(self, "keys_"):
            raise InputError("ArcFeaturizer is not fitted; call fit first")
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

    def restrict(self, names) -> "ArcFeaturizer":
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
            raise InputError("ArcFeaturizer is not fitted; call fit first")
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
        sub = ArcFeaturizer(self.templates, pos=self.pos, distance=self.distance, min_count=self.min_count,
                            feature_source=self.feature_source, lowercase=self.lowercase,
                            word_min_count=self.word_min_count, chunk_size=self.chunk_size)
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
            raise InputError("ArcFeaturizer is not fitted; call fit first")
        arrays = {"keys": np.asarray(self.keys_, np.int64)}
        for key in "wlp":
            voc = self.vocab_[key]
            arrays["vocab_" + key] = np.array(sorted(voc, key=voc.get), dtype=str)
        # name/spec pairs, not a JSON object: the order of the templates is their group id
        items = [[str(k), str(v)] for k, v in self.templates.items()] if isinstance(self.templates, dict) \
            else [str(t) for t in self.templates]
        meta = {"templates": items, "pos": self.pos, "distance": self.distance, "min_count": int(self.min_count),
                "feature_source": self.feature_source, "lowercase": bool(self.lowercase),
                "word_min_count": int(self.word_min_count), "chunk_size": int(self.chunk_size),
                "template_names": list(self.template_names_)}
        return arrays, meta

    @classmethod
    def from_state(cls, arrays, meta, *, path=None) -> "ArcFeaturizer":
        """Rebuild a fitted featurizer from :meth:`get_state`; inconsistencies raise
        :class:`~cutplane.exceptions.ModelFormatError`."""
        try:
            params = {k: meta[k] for k in ("templates", "pos", "distance", "min_count", "feature_source",
                                           "lowercase", "word_min_count", "chunk_size")}
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
            raise ModelFormatError(f"bad featurizer templates: {exc}", path=path,
                                   field="templates") from None
        if [s[0] for s in specs] != names:
            raise ModelFormatError("template names do not match the templates", path=path, field="template_names")
        if keys.dtype != np.int64 or keys.ndim != 1 or np.any(np.diff(keys) <= 0) \
                or (keys.size and (keys[0] < 0 or (keys[-1] >> _TOP) >= len(specs))):
            raise ModelFormatError("feature keys must be strictly increasing int64 of known templates",
                                   path=path, field="keys")
        est.vocab_ = {}
        for k in "wlp":
            voc = vocabs[k]
            if tuple(voc[:len(_SPECIAL)]) != _SPECIAL or len(set(voc)) != len(voc):
                raise ModelFormatError(f"vocabulary {k!r} is malformed", path=path, field="vocab_" + k)
            est.vocab_[k] = {v: i for i, v in enumerate(voc)}
        bits = {k: max(1, (len(v) - 1).bit_length()) for k, v in est.vocab_.items()}
        est._tables = est._compile(specs, bits)
        est.template_names_ = names
        est.keys_ = keys
        est.dim_ = int(keys.shape[0])
        est._hash = _build_table(keys)
        return est
