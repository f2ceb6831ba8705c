"""The named template sets: NER134's composition (MTL sec. 3.3) and select_templates."""

from itertools import combinations

import pytest

from cutplane.exceptions import InputError
from problems.sequence.template_sets import NER134, TEMPLATE_SETS, select_templates
from problems.sequence.templates import parse_templates


def _cells(line):
    body = line.split(":", 1)[1]
    return [tuple(int(x) for x in part[3:-1].split(",")) for part in body.split("/")]


def test_ner134_has_the_papers_composition():
    lines = [line for line in NER134.splitlines() if line.strip()]
    assert len(parse_templates(NER134)) == 134 and lines[-1] == "B"
    unigram = [_cells(x) for x in lines[:-1] if len(_cells(x)) == 1]
    bigram = [_cells(x) for x in lines[:-1] if len(_cells(x)) == 2]
    trigram = [_cells(x) for x in lines[:-1] if len(_cells(x)) == 3]
    assert sorted(unigram) == sorted([[(o, c)] for c in (0, 1) for o in range(-3, 4)])
    # ordered pairs of distinct offsets, one column at a time: words and POS
    assert sorted(bigram) == sorted(
        [[(a, c), (b, c)] for c in (0, 1) for a in range(-3, 4) for b in range(-3, 4) if a != b]
    )
    assert sorted(trigram) == sorted([[(o, 1) for o in t] for t in combinations(range(-3, 4), 3)])
    names = [x.split(":", 1)[0] for x in lines[:-1]]
    assert len(set(names)) == 133
    assert TEMPLATE_SETS["ner134"] == NER134


def test_select_templates_keeps_order_and_refuses_unknown_names():
    text = select_templates(NER134, ["U005", "B", "U000"])
    assert text.splitlines() == ["U000:%x[-3,0]", "U005:%x[2,0]", "B"]
    with pytest.raises(InputError, match="U999"):
        select_templates(NER134, ["U000", "U999"])


def test_chunking_ext_is_the_chunking_set_plus_distinct_templates():
    from problems.sequence.template_sets import CHUNKING, CHUNKING_EXT

    base = {t.name: t.text for t in parse_templates(CHUNKING)}
    ext = parse_templates(CHUNKING_EXT)
    names = [t.name for t in ext]
    assert len(names) == len(set(names)) == len(base) + 11 and names[-1] == "B"
    assert all(any(t.name == n and t.text == text for t in ext) for n, text in base.items())
    # every template extracts a different set of cells (no template repeated under another name)
    bodies = [frozenset(line.split(":", 1)[1].split("/")) for line in CHUNKING_EXT.splitlines() if line.startswith("U")]
    assert len(bodies) == len(set(bodies)) == len(base) - 1 + 11
    assert TEMPLATE_SETS["chunking_ext"] == CHUNKING_EXT


@pytest.mark.parametrize("name", sorted(TEMPLATE_SETS))
def test_every_named_set_parses(name):
    templates = parse_templates(TEMPLATE_SETS[name])
    assert len({t.name for t in templates}) == len(templates) >= 2
