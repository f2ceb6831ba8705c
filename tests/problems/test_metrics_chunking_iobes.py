"""Chunk F1 on IOBES tag sets (seqeval's IOBES strict mode) and on BIO tag sets (conlleval.pl).

Hard expectations come from the tools' own cases: ``test_iobes_tokens`` of seqeval's
``tests/test_scheme.py`` (chakki-works/seqeval: the chunks of every one- and two-tag IOBES
sequence) and the numbers conlleval.pl (version 2004-01-26, as shipped in seqeval's tests) prints
for small BIO files, written out here. Where seqeval is installed (the ``test`` extra), random
corpora are also scored by seqeval itself and compared.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from problems.metrics import chunk_f1
from problems.metrics.chunking import chunk_scheme, iobes_chunks

# seqeval tests/test_scheme.py::test_iobes_tokens: tags -> chunks (type, start, end)
SEQEVAL_IOBES_TOKENS = [
    (["O"], []),
    (["I-PER"], []),
    (["B-PER"], []),
    (["E-PER"], []),
    (["S-PER"], [("PER", 0, 1)]),
    (["O", "O"], []),
    (["O", "I-PER"], []),
    (["O", "B-PER"], []),
    (["O", "E-PER"], []),
    (["O", "S-PER"], [("PER", 1, 2)]),
    (["I-PER", "O"], []),
    (["I-PER", "I-PER"], []),
    (["I-PER", "I-ORG"], []),
    (["I-PER", "B-PER"], []),
    (["I-PER", "E-PER"], []),
    (["I-PER", "E-ORG"], []),
    (["I-PER", "S-PER"], [("PER", 1, 2)]),
    (["B-PER", "O"], []),
    (["B-PER", "I-PER"], []),
    (["B-PER", "I-ORG"], []),
    (["B-PER", "B-PER"], []),
    (["B-PER", "E-PER"], [("PER", 0, 2)]),
    (["B-PER", "E-ORG"], []),
    (["B-PER", "S-PER"], [("PER", 1, 2)]),
    (["E-PER", "O"], []),
    (["E-PER", "I-PER"], []),
    (["E-PER", "B-PER"], []),
    (["E-PER", "E-PER"], []),
    (["E-PER", "S-PER"], [("PER", 1, 2)]),
    (["S-PER", "O"], [("PER", 0, 1)]),
    (["S-PER", "I-PER"], [("PER", 0, 1)]),
    (["S-PER", "B-PER"], [("PER", 0, 1)]),
    (["S-PER", "E-PER"], [("PER", 0, 1)]),
    (["S-PER", "S-PER"], [("PER", 0, 1), ("PER", 1, 2)]),
]


@pytest.mark.parametrize("tags, expected", SEQEVAL_IOBES_TOKENS)
def test_iobes_chunks_are_seqevals(tags, expected):
    assert [(typ, s, e) for s, e, typ in iobes_chunks(tags)] == expected
    # scored against themselves: every chunk found is correct, the count is seqeval's
    s = chunk_f1([tags], [tags], scheme="iobes")
    assert (s.n_correct, s.n_gold, s.n_pred) == (len(expected),) * 3


def test_adjacent_singletons_are_two_chunks():
    # conlleval reads S as an inside tag and merges S-PER S-PER into one chunk; the scheme makes two
    gold = [["S-PER", "S-PER", "O", "B-LOC", "E-LOC"]]
    pred = [["S-PER", "O", "O", "B-LOC", "E-LOC"]]
    s = chunk_f1(gold, pred)  # auto: IOBES
    assert (s.n_correct, s.n_gold, s.n_pred) == (2, 3, 2)
    assert (s.precision, s.recall) == (100.0, pytest.approx(200 / 3))
    assert s.per_type["PER"].n_gold == 2 and s.per_type["LOC"].f1 == 100.0
    # conlleval.pl on the same file: 5 tokens with 2 phrases; found: 2 phrases; correct: 1 (FB1 50.00)
    c = chunk_f1(gold, pred, scheme="conlleval")
    assert (c.n_correct, c.n_gold, c.n_pred, c.f1) == (1, 2, 2, 50.0)


def test_ill_formed_iobes_runs_are_no_chunk():
    # B never closed, I without B, a type change inside: none is a chunk (strict mode)
    gold = [["B-PER", "I-PER", "E-PER", "B-ORG", "I-ORG", "O", "I-LOC", "E-LOC", "B-X", "I-Y", "E-Y"]]
    assert iobes_chunks(gold[0]) == [(0, 3, "PER")]
    s = chunk_f1(gold, gold)
    assert (s.n_correct, s.n_gold, s.n_pred, s.f1, s.accuracy) == (1, 1, 1, 100.0, 100.0)
    # a chunk never crosses a sentence boundary
    assert chunk_f1([["B-PER"], ["E-PER"]], [["B-PER"], ["E-PER"]]).n_gold == 0


def test_scheme_detection_and_errors():
    assert chunk_scheme([["B-NP", "I-NP", "O"]]) == "conlleval"
    assert chunk_scheme([["I-NP", "E-NP"]]) == "conlleval"  # IOE
    assert chunk_scheme([["B-NP", "E-NP"]]) == "iobes"
    assert chunk_scheme([["O"]], [["S-NP"]]) == "iobes"  # the prediction's tags count too
    with pytest.raises(InputError, match="scheme"):
        chunk_f1([["O"]], [["O"]], scheme="bilou")
    with pytest.raises(InputError):
        chunk_f1([["S-A", "O"]], [["S-A"]])


# conlleval.pl (2004-01-26) on BIO files: (gold, pred) -> (tokens, phrases, found, correct, accuracy, P, R, FB1)
# as it prints them (two decimals)
CONLLEVAL_CASES = [
    # seqeval's README example
    (
        [["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]],
        [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]],
        (10, 2, 2, 1, 80.00, 50.00, 50.00, 50.00),
    ),
    # seqeval tests/test_v1.py::test_scores
    ([["B-A", "B-B", "O", "B-A"]], [["O", "B-B", "B-C", "B-A"]], (4, 3, 3, 2, 50.00, 66.67, 66.67, 66.67)),
    # seqeval tests/test_metrics.py::test_performance_measure
    (
        [["O", "O", "O", "B-MISC", "I-MISC", "O", "B-ORG"], ["B-PER", "I-PER", "O"]],
        [["O", "O", "B-MISC", "I-MISC", "I-MISC", "O", "O"], ["B-PER", "I-PER", "O"]],
        (10, 3, 2, 1, 70.00, 50.00, 33.33, 40.00),
    ),
]


@pytest.mark.parametrize("gold, pred, expected", CONLLEVAL_CASES)
def test_bio_equals_conlleval_pl(gold, pred, expected):
    s = chunk_f1(gold, pred)
    n_tokens, n_gold, n_pred, n_correct, acc, p, r, f = expected
    assert (s.n_tokens, s.n_gold, s.n_pred, s.n_correct) == (n_tokens, n_gold, n_pred, n_correct)
    assert [round(v, 2) for v in (s.accuracy, s.precision, s.recall, s.f1)] == [acc, p, r, f]


iobes_tag = st.sampled_from(["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "E-LOC", "S-LOC"])
bio_tag = st.sampled_from(["O", "B-NP", "I-NP", "B-VP", "I-VP"])


def _corpus(tag):
    return st.lists(st.lists(st.tuples(tag, tag), min_size=1, max_size=9), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(_corpus(iobes_tag))
def test_iobes_equals_seqeval_strict(corpus):
    metrics = pytest.importorskip("seqeval.metrics")
    from seqeval.scheme import IOBES

    gold = [[g for g, _ in s] for s in corpus]
    pred = [[p for _, p in s] for s in corpus]
    s = chunk_f1(gold, pred, scheme="iobes")
    kw = {"mode": "strict", "scheme": IOBES, "average": "micro", "zero_division": 0}
    assert s.precision / 100 == pytest.approx(metrics.precision_score(gold, pred, **kw), abs=1e-12)
    assert s.recall / 100 == pytest.approx(metrics.recall_score(gold, pred, **kw), abs=1e-12)
    assert s.f1 / 100 == pytest.approx(metrics.f1_score(gold, pred, **kw), abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(_corpus(bio_tag))
def test_bio_equals_seqeval_default_mode(corpus):
    # seqeval's default mode is conlleval's reading (its test suite checks it against conlleval.pl)
    metrics = pytest.importorskip("seqeval.metrics")
    gold = [[g for g, _ in s] for s in corpus]
    pred = [[p for _, p in s] for s in corpus]
    s = chunk_f1(gold, pred)
    assert s.f1 / 100 == pytest.approx(metrics.f1_score(gold, pred, zero_division=0), abs=1e-12)
    assert s.accuracy / 100 == pytest.approx(metrics.accuracy_score(gold, pred), abs=1e-12)
