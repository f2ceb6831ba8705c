"""Segmentation P/R/F1 and R_iv; per-token accuracy."""

from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from problems.metrics import segmentation_scores, token_accuracy


def test_by_hand():
    s = segmentation_scores([["中国", "人民"]], [["中", "国", "人民"]], training_words={"中国", "天"})
    assert (s.n_correct, s.n_gold, s.n_pred) == (1, 2, 3)
    assert s.precision == pytest.approx(100 / 3) and s.recall == 50.0
    assert s.f1 == pytest.approx(2 * (100 / 3) * 50 / (100 / 3 + 50))
    assert (s.n_gold_iv, s.n_correct_iv, s.r_iv, s.r_oov) == (1, 0, 0.0, 100.0)
    assert segmentation_scores([["中国"]], [["中国"]]).r_iv is None


def test_errors():
    with pytest.raises(InputError):
        segmentation_scores([["中国"]], [["中", "人"]])
    with pytest.raises(InputError):
        segmentation_scores([["中国"]], [])


def cuts(draw_bits, text):
    words, cur = [], text[0]
    for ch, bit in zip(text[1:], draw_bits):
        if bit:
            words.append(cur)
            cur = ch
        else:
            cur += ch
    return words + [cur]


@settings(max_examples=300)
@given(
    st.text(alphabet="天地玄黄宇宙", min_size=1, max_size=12).flatmap(
        lambda text: st.tuples(
            st.just(text),
            st.lists(st.booleans(), min_size=len(text) - 1, max_size=len(text) - 1),
            st.lists(st.booleans(), min_size=len(text) - 1, max_size=len(text) - 1),
        )
    )
)
def test_against_boundary_sets(args):
    text, gb, pb = args
    gold, pred = cuts(gb, text), cuts(pb, text)
    s = segmentation_scores([gold], [pred], training_words={"天", "地玄"})
    # a word is correct iff both its ends are boundaries of the prediction and none lies inside
    pred_bounds = {0, *accumulate(len(w) for w in pred)}
    ok = 0
    ok_iv = 0
    for start, w in zip([0, *accumulate(len(w) for w in gold)], gold):
        good = (
            start in pred_bounds
            and start + len(w) in pred_bounds
            and not any(start < b < start + len(w) for b in pred_bounds)
        )
        ok += good
        ok_iv += good and w in {"天", "地玄"}
    assert (s.n_correct, s.n_gold, s.n_pred, s.n_correct_iv) == (ok, len(gold), len(pred), ok_iv)
    assert segmentation_scores([gold], [gold]).f1 == 100.0


def test_token_accuracy():
    assert token_accuracy([[1, 2, 3], [4]], [[1, 0, 3], [4]]) == 75.0
    assert token_accuracy([], []) == 0.0
    with pytest.raises(InputError):
        token_accuracy([[1, 2]], [[1]])


@pytest.mark.data
def test_pku_gold_against_itself_and_a_perturbed_copy(data_dir):
    from problems.io.segmentation import read_segmented, read_word_list

    folder = data_dir / "sighan2005-cws"
    gold = read_segmented(folder / "pku_test_gold.utf8.gz")
    vocab = read_word_list(folder / "pku_training_words.utf8.gz")
    s = segmentation_scores(gold, gold, vocab)
    assert s.f1 == 100.0 and s.r_iv == 100.0 and s.r_oov == 100.0
    n_iv = sum(w in vocab for sent in gold for w in sent)
    assert s.n_gold_iv == n_iv
    # merge every other pair of adjacent words: those gold words are lost, the rest kept
    pred, lost = [], 0
    for sent in gold:
        out, i = [], 0
        while i < len(sent):
            if i + 1 < len(sent) and i % 4 == 0:
                out.append(sent[i] + sent[i + 1])
                lost += 2
                i += 2
            else:
                out.append(sent[i])
                i += 1
        pred.append(out)
    s = segmentation_scores(gold, pred, vocab)
    assert s.n_correct == s.n_gold - lost
    assert s.recall == pytest.approx(100 * (s.n_gold - lost) / s.n_gold)
