"""Segmented Chinese text <-> character tags, and the SIGHAN 2005 files."""

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from problems.io.segmentation import (
    read_segmented,
    read_segmented_as_tags,
    read_word_list,
    tags_to_words,
    words_to_tags,
    write_segmented,
)

words_st = st.lists(st.text(alphabet="天地玄黄宇宙洪荒ab", min_size=1, max_size=5), min_size=0, max_size=8)


def test_tags_by_hand():
    assert words_to_tags(["中国", "人", "民主化"], "BMES") == (list("中国人民主化"), ["B", "E", "S", "B", "M", "E"])
    assert words_to_tags(["中国", "人", "民主化"], "BIE") == (list("中国人民主化"), ["B", "E", "B", "B", "I", "E"])


@settings(max_examples=300)
@given(words_st, st.sampled_from(["BMES", "BIE"]))
def test_round_trip(words, scheme):
    chars, tags = words_to_tags(words, scheme)
    assert "".join(chars) == "".join(words)
    assert tags_to_words(chars, tags, scheme) == list(words)


@settings(max_examples=300)
@given(st.lists(st.sampled_from("BMES"), min_size=0, max_size=12))
def test_any_tag_sequence_decodes_to_a_partition(tags):
    chars = [chr(0x4E00 + i) for i in range(len(tags))]
    words = tags_to_words(chars, tags, "BMES")
    assert "".join(words) == "".join(chars)
    # every B or S starts a word, every E or S ends one
    starts = {0}
    pos = 0
    for w in words:
        starts.add(pos)
        pos += len(w)
    for i, t in enumerate(tags):
        if t in "BS":
            assert i in starts
        if t in "ES" and i + 1 < len(tags):
            assert i + 1 in starts


def test_bad_scheme_and_tag():
    with pytest.raises(InputError):
        words_to_tags(["ab"], "IOB")
    with pytest.raises(InputError):
        tags_to_words(list("ab"), ["B", "M"], "BIE")
    with pytest.raises(InputError):
        tags_to_words(list("ab"), ["B"], "BMES")


def test_read_write_round_trip(tmp_path):
    p = tmp_path / "seg.utf8"
    p.write_bytes("\ufeff中国  人民\r\n\r\n天 地  玄黄  \r\n".encode())
    sents = read_segmented(p)
    assert sents == [["中国", "人民"], ["天", "地", "玄黄"]]
    corpus = read_segmented_as_tags(p, "BMES")
    assert corpus.inputs[1] == [("天",), ("地",), ("玄",), ("黄",)]
    assert corpus.labels[1] == ["S", "S", "B", "E"] and corpus.first_lines == [1, 3]
    out = tmp_path / "o.gz"
    write_segmented(out, sents)
    assert read_segmented(out) == sents


def test_bad_utf8_names_the_line(tmp_path):
    p = tmp_path / "seg.gz"
    p.write_bytes(gzip.compress("中国 人民\n".encode() + b"\xe4\xb8\n"))
    with pytest.raises(InputError) as err:
        read_segmented(p)
    assert err.value.line == 2 and err.value.path == str(p)


@pytest.mark.data
@pytest.mark.parametrize(
    "corpus, n_sent, n_words, n_types, n_chars, n_list, oov",
    [
        ("pku", 1944, 104372, 13148, 172733, 55303, 0.0575),
        # the README's 67,690 characters count the file's byte-order mark; there are 67,689 characters
        ("cityu", 1492, 40936, 9000, 67689, 69085, 0.0740),
    ],
)
def test_sighan_counts_match_the_readme(data_dir, corpus, n_sent, n_words, n_types, n_chars, n_list, oov):
    folder = data_dir / "sighan2005-cws"
    sents = read_segmented(folder / f"{corpus}_test_gold.utf8.gz")
    words = [w for s in sents for w in s]
    assert (len(sents), len(words), len(set(words))) == (n_sent, n_words, n_types)
    assert sum(map(len, words)) == n_chars
    raw = gzip.decompress((folder / f"{corpus}_test_gold.utf8.gz").read_bytes()).decode("utf-8")
    assert sum(1 for ch in raw if not ch.isspace() and ch != "\ufeff") == n_chars
    vocab = read_word_list(folder / f"{corpus}_training_words.utf8.gz")
    assert len(vocab) == n_list
    assert sum(w not in vocab for w in words) / len(words) == pytest.approx(oov, abs=5e-4)
    tagged = read_segmented_as_tags(folder / f"{corpus}_test_gold.utf8.gz", "BMES")
    assert tagged.n_tokens == n_chars and tagged.n_sentences == n_sent
