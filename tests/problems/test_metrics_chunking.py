"""conlleval chunk F1: hand-made counts (IOB1/IOB2/IOE/brackets), identity, and CoNLL-2000 test
scored against a perturbed copy, checked against an independent chunk-set construction."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from problems.metrics import chunk_f1, token_accuracy


def counts(s):
    return (s.n_correct, s.n_gold, s.n_pred)


def test_iob2_by_hand():
    s = chunk_f1([["B-NP", "I-NP", "O", "B-VP"]], [["B-NP", "O", "O", "B-VP"]])
    assert counts(s) == (1, 2, 2)
    assert (s.precision, s.recall, s.f1, s.accuracy) == (50.0, 50.0, 50.0, 75.0)
    assert s.per_type["VP"].f1 == 100.0 and s.per_type["NP"].n_correct == 0


def test_iob1_versus_iob2_same_chunks():
    # IOB1: I opens a chunk after O / another type, B only splits two adjacent chunks of one type
    gold_iob1 = [["I-NP", "I-NP", "B-NP", "O", "I-VP"]]
    pred_iob2 = [["B-NP", "I-NP", "B-NP", "O", "B-VP"]]
    s = chunk_f1(gold_iob1, pred_iob2)
    assert counts(s) == (3, 3, 3) and s.f1 == 100.0
    assert s.accuracy == 60.0  # tags differ on tokens 0 and 4


def test_i_after_o_and_type_change():
    assert counts(chunk_f1([["O", "I-NP", "I-NP"]], [["O", "B-NP", "I-NP"]])) == (1, 1, 1)
    # I-VP after B-NP: a type change opens a new chunk
    assert counts(chunk_f1([["B-NP", "I-VP"]], [["B-NP", "I-NP"]])) == (0, 2, 1)
    # B-NP after I-NP splits, I-NP after I-NP continues
    assert counts(chunk_f1([["B-NP", "I-NP", "B-NP"]], [["B-NP", "I-NP", "I-NP"]])) == (0, 2, 1)
    # a chunk never crosses a sentence boundary
    assert counts(chunk_f1([["B-NP", "I-NP"], ["I-NP"]], [["B-NP", "I-NP"], ["B-NP"]])) == (2, 2, 2)


def test_ioe_and_bracket_tags():
    # IOE1: E-X closes a chunk when the next token continues with I-X of the same type
    assert counts(chunk_f1([["I-NP", "E-NP", "I-NP"]], [["I-NP", "I-NP", "I-NP"]])) == (0, 2, 1)
    # '[' and ']' tags are one-token chunks
    assert counts(chunk_f1([["[-NP", "]-NP"]], [["[-NP", "]-NP"]])) == (2, 2, 2)


def test_empty_and_errors():
    s = chunk_f1([["O", "O"]], [["O", "O"]])
    assert counts(s) == (0, 0, 0) and (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0) and s.accuracy == 100.0
    with pytest.raises(InputError):
        chunk_f1([["O"]], [["O"], ["O"]])
    with pytest.raises(InputError):
        chunk_f1([["O", "O"]], [["O"]])


def chunk_set(sentences):
    """IOB chunks as (sentence, start, end, type), built by scanning for maximal runs."""
    out = set()
    for i, tags in enumerate(sentences):
        t = 0
        n = len(tags)
        while t < n:
            if tags[t] == "O":
                t += 1
                continue
            typ = tags[t][2:]
            end = t + 1
            while end < n and tags[end] == "I-" + typ:
                end += 1
            out.add((i, t, end, typ))
            t = end
    return out


tag_st = st.sampled_from(["O", "B-NP", "I-NP", "B-VP", "I-VP", "B-A-B", "I-A-B"])
corpus_st = st.lists(st.lists(st.tuples(tag_st, tag_st), min_size=1, max_size=8), min_size=1, max_size=4)


@settings(max_examples=400)
@given(corpus_st)
def test_counts_equal_chunk_set_intersection(corpus):
    gold = [[g for g, _ in s] for s in corpus]
    pred = [[p for _, p in s] for s in corpus]
    G, P = chunk_set(gold), chunk_set(pred)
    s = chunk_f1(gold, pred)
    assert counts(s) == (len(G & P), len(G), len(P))
    for typ, ts in s.per_type.items():
        assert ts.n_correct == sum(1 for c in G & P if c[3] == typ)
    assert chunk_f1(gold, gold).f1 == (100.0 if G else 0.0)
    assert s.accuracy == pytest.approx(token_accuracy(gold, pred))


@pytest.mark.data
def test_conll2000_test_against_perturbed_copy(data_dir):
    from problems.io.conll import read_conll

    gold = read_conll(data_dir / "conll2000-chunking" / "test.txt.gz").labels
    ident = chunk_f1(gold, gold)
    assert ident.f1 == 100.0 and ident.accuracy == 100.0
    G = chunk_set(gold)
    assert ident.n_gold == len(G)
    labels = sorted({t for s in gold for t in s})
    rng = np.random.default_rng(2000)
    pred = [[labels[rng.integers(len(labels))] if rng.random() < 0.1 else t for t in s] for s in gold]
    P = chunk_set(pred)
    s = chunk_f1(gold, pred)
    assert counts(s) == (len(G & P), len(G), len(P))
    p, r = 100 * len(G & P) / len(P), 100 * len(G & P) / len(G)
    assert s.f1 == pytest.approx(2 * p * r / (p + r), rel=1e-12)
    assert 40 < s.f1 < 95
    for typ in {c[3] for c in G | P}:
        assert s.per_type[typ].n_gold == sum(1 for c in G if c[3] == typ)
        assert s.per_type[typ].n_pred == sum(1 for c in P if c[3] == typ)
