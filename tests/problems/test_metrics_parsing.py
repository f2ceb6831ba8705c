"""UAS / LAS / complete-sentence accuracy on hand-made examples with known counts."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from problems.metrics.parsing import uas

# sentence 1: 5 words, word 5 punctuation; pred gets words 2 and 5 wrong
G1 = [2, 0, 2, 3, 2]
P1 = [2, 0, 1, 3, 4]
U1 = ["PRON", "VERB", "NOUN", "ADP", "PUNCT"]
# sentence 2: 3 words, word 3 punctuation and wrong, the rest right
G2 = [0, 1, 1]
P2 = [0, 1, 2]
U2 = ["VERB", "NOUN", "PUNCT"]


def test_hand_made_counts():
    r = uas([G1, G2], [P1, P2], upos=[U1, U2])
    # all words: 8, correct: s1 3 (words 1,2,4), s2 2 -> 5/8
    assert (r.n_words, r.n_correct) == (8, 5)
    assert r.uas_punct == pytest.approx(5 / 8)
    # non-punct: s1 4 words, 3 correct; s2 2 words, 2 correct -> 5/6
    assert (r.n_words_nopunct, r.n_correct_nopunct) == (6, 5)
    assert r.uas == pytest.approx(5 / 6)
    # exact match: none with punctuation, s2 without
    assert r.complete == 0.0
    assert r.complete_nopunct == pytest.approx(0.5)
    assert r.las is None and r.n_sentences == 2


def test_mask_equals_upos_and_decoder_convention_accepted():
    masks = [np.array(u) == "PUNCT" for u in (U1, U2)]
    a = uas([G1, G2], [P1, P2], upos=[U1, U2])
    b = uas([[-1] + G1, [-1] + G2], [np.array([-1] + P1), np.array([-1] + P2)], punct=masks)
    assert a == b


def test_without_punctuation_information_the_nopunct_fields_are_none():
    r = uas([G1], [P1])
    assert r.uas is None and r.complete_nopunct is None
    assert r.uas_punct == pytest.approx(3 / 5)


def test_labelled_scores():
    gl = [["nsubj", "root", "obj", "case", "punct"], ["root", "obj", "punct"]]
    pl = [["nsubj", "root", "obj", "obl", "punct"], ["root", "nsubj", "punct"]]
    r = uas([G1, G2], [P1, P2], upos=[U1, U2], gold_deprels=gl, pred_deprels=pl)
    # head-right words: s1 {1,2,4}, s2 {1,2}; labels right among them: s1 {1,2}, s2 {1} -> 3/8
    assert r.las_punct == pytest.approx(3 / 8)
    # non-punct: same 3 of 6
    assert r.las == pytest.approx(3 / 6)


def test_sentences_as_gold(tmp_path):
    from problems.io.conllu import read_conllu

    rows = [(w, h, u) for w, h, u in zip("abcde", G1, U1)]
    text = "".join(f"{i}\t{w}\t{w}\t{u}\t_\t_\t{h}\tdep\t_\t_\n" for i, (w, h, u) in enumerate(rows, 1))
    p = tmp_path / "g.conllu"
    p.write_text(text + "\n", encoding="utf-8")
    r = uas(read_conllu(p), [P1])
    assert r.uas == pytest.approx(3 / 4) and r.uas_punct == pytest.approx(3 / 5)


@settings(max_examples=200)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.booleans()), min_size=1, max_size=6),
        min_size=1,
        max_size=5,
    )
)
def test_counts_agree_with_a_direct_loop(data):
    gold = [np.array([g for g, _, _ in s]) for s in data]
    pred = [np.array([p for _, p, _ in s]) for s in data]
    punct = [np.array([m for _, _, m in s]) for s in data]
    r = uas(gold, pred, punct=punct)
    words = [(g, p, m) for s in data for g, p, m in s]
    assert r.n_correct == sum(g == p for g, p, _ in words)
    assert r.n_correct_nopunct == sum(g == p for g, p, m in words if not m)
    assert r.complete == pytest.approx(np.mean([all(g == p for g, p, _ in s) for s in data]))
    assert r.complete_nopunct == pytest.approx(np.mean([all(g == p for g, p, m in s if not m) for s in data]))


def test_identity_is_perfect():
    r = uas([G1, G2], [G1, G2], upos=[U1, U2])
    assert r.uas == r.uas_punct == r.complete == r.complete_nopunct == 1.0


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(gold=[G1], pred=[P1, P2]), "1 gold and 2 predicted"),
        (dict(gold=[G1], pred=[P1[:3]]), "5 gold heads but 3"),
        (dict(gold=[G1], pred=[P1], punct=[[True]]), "punctuation mask"),
        (dict(gold=[G1], pred=[np.array(P1, dtype=float)]), "integer"),
    ],
)
def test_mismatches_raise(kwargs, msg):
    with pytest.raises(InputError, match=msg):
        uas(**kwargs)
