"""Inputs of :class:`problems.parsing.parser.DependencyParser` (moved here from that module).

:func:`parse_arc_templates` reads template text (re-exported by
:mod:`problems.parsing.parser`, its documented home); ``_check_sentences`` and
``_gold_trees`` validate training and test sentences; :class:`_ParseExamples` is the
per-sentence view of the parse oracle that SPOM reads.
"""
from __future__ import annotations

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["parse_arc_templates"]


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
    from problems.parsing.features import ArcFeaturizer

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
            raise InputError(f"bad template line {raw.strip()!r}; expected 'name = atoms' or 'atoms'",
                             path=path, line=lineno, field="templates")
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
            raise InputError(f"sentence {i} has no gold heads", field="heads",
                             path=getattr(s, "path", None), line=getattr(s, "line", None) or None)
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
            raise InputError(f"sentence {i}: the root has {int(np.sum(h[1:] == 0))} children but "
                             "single_root=True; use single_root=False for multi-rooted treebanks",
                             field="heads", **where)
        trees.append(h)
    return trees


class _ParseExamples:
    """SPOM's per-sentence view of a parsing training set (:mod:`cutplane.online.example_oracles`).

    ``example_support(i)`` is the sorted list of features on the arcs of sentence ``i``;
    ``example_subgradient(i, w_support)`` runs the parse oracle's loss-augmented decoder on
    that sentence with its features renumbered ``0..n_i - 1`` (one :class:`ParseOracle` over a
    copy of the arc features with local ids, built once), so a round costs O(arcs of the
    sentence), never O(dim). The value is the sentence's structured hinge, the subgradient
    ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` in global coordinates.

    Parameters
    ----------
    features : oracles.parse_oracle.ArcFeatures
    trees : list of ndarray of shape (n_i + 1,)
        Gold heads.
    projective, single_root, normalize_loss : bool
        As in :class:`oracles.parse_oracle.ParseOracle`.
    """

    def __init__(self, features, trees, *, projective, single_root, normalize_loss):
        from oracles.parse_oracle import ArcFeatures, ParseOracle

        f = features
        self.n_samples, self.dim = int(f.n_sentences), int(f.dim)
        starts = f.indptr[f.arc_ptr]
        local = np.empty_like(f.indices)
        ufs = []
        for i in range(self.n_samples):
            a, b = int(starts[i]), int(starts[i + 1])
            uf, inv = np.unique(f.indices[a:b], return_inverse=True)
            ufs.append(uf.astype(np.int64))
            local[a:b] = inv
        self._uf = ufs
        self._width = max(1, max((u.size for u in ufs), default=1))
        self._local = ParseOracle(ArcFeatures(f.lengths, f.arc_ptr, f.indptr, local, self._width), trees,
                                  projective=projective, single_root=single_root, normalize_loss=normalize_loss)

    def example_support(self, i):
        return self._uf[i]

    def example_subgradient(self, i, w_support):
        from cutplane.online import ExampleSubgradient

        uf = self._uf[i]
        w = np.zeros(self._width)
        w[:uf.size] = w_support
        cut = self._local.loss_augmented(int(i), w)
        row = cut.dphi.tocsr()
        row.sum_duplicates()
        row.eliminate_zeros()
        return ExampleSubgradient(float(cut.value), uf[row.indices], -row.data.astype(np.float64))
