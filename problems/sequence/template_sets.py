"""Named CRF++ template sets of Mao and Tsang 2013's experiments and of the benchmarks.

- ``TP1`` and ``TP2``: Chinese word segmentation, Mao and Tsang 2013, Table 2, on one column
  of characters. TP2 adds seven character bi-gram templates to TP1.
- ``CHUNKING``: the CoNLL-2000 set of CRF++'s chunking example.
- ``CHUNKING_EXT``: ``CHUNKING`` plus eleven CRF++ templates on the same two columns: word
  bi-grams left, right and around the token, word x POS conjunctions at offsets -1..1, the POS
  pair around the token and the word tri-gram around it (33 templates). Redundant by design:
  MTL^struct is meant to pick among them.
- ``NER134``: the CoNLL-2002 set of Mao and Tsang 2013, sec. 3.3, on ``word POS`` columns: uni-grams of
  words and of POS at offsets -3..3 (14), bi-grams of words and of POS over every ordered pair
  of distinct offsets (2 x 42), POS tri-grams over every set of three offsets (35) and ``B``:
  134 templates. The paper does not list them; this enumeration is the one that gives its
  count (ordered pairs make the bi-grams redundant in pairs, which is the paper's point about
  redundant templates).
"""

from __future__ import annotations

from itertools import combinations, permutations

from problems.sequence.templates import CHUNKING_TEMPLATES

__all__ = ["TP1", "TP2", "CHUNKING", "CHUNKING_EXT", "NER134", "TEMPLATE_SETS", "select_templates"]

_UNI = ["U00:%x[-2,0]", "U01:%x[-1,0]", "U02:%x[0,0]", "U03:%x[1,0]", "U04:%x[2,0]"]
_TRI = ["U05:%x[-2,0]/%x[-1,0]/%x[0,0]", "U06:%x[-1,0]/%x[0,0]/%x[1,0]", "U07:%x[0,0]/%x[1,0]/%x[2,0]"]
_BI1 = ["U08:%x[-1,0]/%x[0,0]", "U09:%x[0,0]/%x[1,0]"]
_BI2 = [
    "U10:%x[-2,0]/%x[-1,0]",
    "U11:%x[1,0]/%x[2,0]",
    "U12:%x[-2,0]/%x[0,0]",
    "U13:%x[-1,0]/%x[1,0]",
    "U14:%x[0,0]/%x[2,0]",
    "U15:%x[-2,0]/%x[1,0]",
    "U16:%x[-1,0]/%x[2,0]",
]

TP1 = "\n".join(_UNI + _TRI + _BI1 + ["B"]) + "\n"
TP2 = "\n".join(_UNI + _TRI + _BI1 + _BI2 + ["B"]) + "\n"
CHUNKING = (
    CHUNKING_TEMPLATES if isinstance(CHUNKING_TEMPLATES, str) else "\n".join(t.text for t in CHUNKING_TEMPLATES) + "\n"
)
_CHUNK_EXTRA = [
    "U07:%x[1,0]/%x[2,0]",
    "U08:%x[-2,0]/%x[-1,0]",
    "U09:%x[-1,0]/%x[1,0]",
    "U40:%x[0,0]/%x[0,1]",
    "U41:%x[-1,0]/%x[0,1]",
    "U42:%x[0,0]/%x[-1,1]",
    "U43:%x[1,0]/%x[0,1]",
    "U44:%x[0,0]/%x[1,1]",
    "U45:%x[-1,1]/%x[1,1]",
    "U46:%x[-1,0]/%x[0,0]/%x[1,0]",
    "U47:%x[-1,0]/%x[-1,1]",
]
CHUNKING_EXT = (
    "\n".join([line for line in CHUNKING.splitlines() if line.strip()[:1] == "U"] + _CHUNK_EXTRA + ["B"]) + "\n"
)


def _ner134() -> str:
    offsets = range(-3, 4)
    lines: list[str] = []

    def add(cells):
        lines.append(f"U{len(lines):03d}:" + "/".join(f"%x[{o},{c}]" for o, c in cells))

    for col in (0, 1):
        for o in offsets:
            add([(o, col)])
    for col in (0, 1):
        for a, b in permutations(offsets, 2):
            add([(a, col), (b, col)])
    for trio in combinations(offsets, 3):
        add([(o, 1) for o in trio])
    return "\n".join(lines + ["B"]) + "\n"


NER134 = _ner134()


def select_templates(text: str, names) -> str:
    """The lines of template set ``text`` whose names are in ``names`` (``B`` by its name too).

    Raises
    ------
    cutplane.exceptions.InputError
        If a name is not in the set.
    """
    from cutplane.exceptions import InputError

    lines = [line for line in text.splitlines() if line.strip()]
    by_name = {line.split(":", 1)[0]: line for line in lines}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise InputError(f"templates not in the set: {', '.join(missing)}", field="templates")
    keep = set(names)
    return "\n".join(line for line in lines if line.split(":", 1)[0] in keep) + "\n"


TEMPLATE_SETS = {"tp1": TP1, "tp2": TP2, "chunking": CHUNKING, "chunking_ext": CHUNKING_EXT, "ner134": NER134}
