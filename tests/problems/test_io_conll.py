"""CoNLL / CRF++ column files, and the shared text opener (gzip, UTF-8 errors with line numbers)."""

import gzip

import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems.io._open import iter_lines, open_text
from problems.io.conll import iter_column_sentences, read_conll, read_crfpp, write_columns
from problems.sequence.feature_index import LabelAlphabet

SAMPLE = "Confidence NN B-NP\nin IN B-PP\n\n-DOCSTART- -X- O\n\nthe DT B-NP\npound NN I-NP\n\n\n"


def test_read_sample_plain_and_gzip(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_text(SAMPLE, encoding="utf-8")
    packed = tmp_path / "a.gz"  # gzip detected by magic bytes, whatever the name
    packed.write_bytes(gzip.compress(SAMPLE.encode()))
    renamed = tmp_path / "b.txt"
    renamed.write_bytes(gzip.compress(SAMPLE.encode()))
    for p in (plain, packed, renamed):
        c = read_conll(p)
        assert c.inputs == [[("Confidence", "NN"), ("in", "IN")], [("the", "DT"), ("pound", "NN")]]
        assert c.labels == [["B-NP", "B-PP"], ["B-NP", "I-NP"]]
        assert c.first_lines == [1, 6]
        assert (c.n_sentences, c.n_tokens) == (2, 4)


def test_docstart_kept_when_not_skipped(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text(SAMPLE, encoding="utf-8")
    sents = list(iter_column_sentences(p, skip_docstart=False))
    assert [s.rows[0][0] for s in sents] == ["Confidence", "-DOCSTART-", "the"]


def test_wrong_column_count_names_file_and_line(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("a NN B-NP\nb NN I-NP\n\nc NN\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_conll(p)
    assert err.value.path == str(p) and err.value.line == 4 and err.value.field == "columns"
    assert "expected 3" in str(err.value) and "found 2" in str(err.value)
    p.write_text("a NN B-NP\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_conll(p, n_columns=4)
    assert err.value.line == 1


def test_bad_utf8_names_the_line(tmp_path):
    p = tmp_path / "bad.gz"
    p.write_bytes(gzip.compress(b"a NN O\n\nb NN O\nc\xe9 NN O\n"))
    with pytest.raises(InputError) as err:
        read_conll(p)
    assert err.value.line == 4 and err.value.path == str(p) and "UTF-8" in str(err.value)


def test_unknown_label_in_fixed_label_set_names_file_and_line(tmp_path):
    p = tmp_path / "test.txt"
    p.write_text("a NN B-NP\n\nb NN O\nc VB B-XX\n", encoding="utf-8")
    c = read_conll(p)
    alphabet = LabelAlphabet(["B-NP", "I-NP", "O"])
    with pytest.raises(InputError) as err:
        c.label_codes(alphabet)
    assert err.value.path == str(p) and err.value.line == 4 and "B-XX" in str(err.value)
    ok = read_conll(p)
    ok.labels[1][1] = "O"
    assert ok.label_codes(alphabet).tolist() == [0, 2, 2]


def test_truncated_gzip_and_missing_file(tmp_path):
    p = tmp_path / "t.gz"
    p.write_bytes(gzip.compress(SAMPLE.encode() * 50)[:-12])
    with pytest.raises(InputError) as err:
        read_conll(p)
    assert err.value.path == str(p) and err.value.line is not None
    with pytest.raises(InputError):
        read_conll(tmp_path / "missing.txt")


def test_open_text_strips_bom_and_crlf(tmp_path):
    p = tmp_path / "bom.txt"
    p.write_bytes("\ufeffab\r\ncd\n".encode())
    assert list(iter_lines(p)) == [(1, "ab"), (2, "cd")]
    with open_text(p) as f:
        assert f.read() == "ab\ncd\n"


def test_crfpp_and_writer_round_trip(tmp_path):
    p = tmp_path / "train.data"
    p.write_text("x1\ty1\tL1\nx2\ty2\tL2\n\nx3\ty3\tL1\n", encoding="utf-8")
    c = read_crfpp(p)
    assert c.labels == [["L1", "L2"], ["L1"]]
    out = tmp_path / "out.txt.gz"
    gold_rows = [[row + (lab,) for row, lab in zip(s, ls)] for s, ls in zip(c.inputs, c.labels)]
    write_columns(out, gold_rows, [["L2", "L2"], ["L1"]])
    back = read_conll(out, n_columns=4)
    assert back.labels == [["L2", "L2"], ["L1"]]
    assert [[r[-1] for r in s] for s in back.inputs] == c.labels
    unl = read_crfpp(p, labeled=False)
    assert unl.labels is None and unl.inputs[0][0] == ("x1", "y1", "L1")
    with pytest.raises(InputError):
        write_columns(tmp_path / "x.txt", gold_rows, [["L1"], ["L1"]])


@pytest.mark.data
@pytest.mark.parametrize(
    "folder, name, n_sent, n_tok, n_labels",
    [
        ("conll2000-chunking", "train.txt.gz", 8936, 211727, 22),
        ("conll2000-chunking", "test.txt.gz", 2012, 47377, 19),
        ("conll2002-ner-es", "esp.train.gz", 8323, 264715, 9),
        ("conll2002-ner-es", "esp.testa.gz", 1915, 52923, 9),
        ("conll2002-ner-es", "esp.testb.gz", 1517, 51533, 9),
    ],
)
def test_counts_match_the_readmes(data_dir, folder, name, n_sent, n_tok, n_labels):
    c = read_conll(data_dir / folder / name, n_columns=3)
    assert c.n_sentences == n_sent
    assert c.n_tokens == n_tok
    assert len(LabelAlphabet.fit(c.labels)) == n_labels
    # token lines = non-blank lines of the raw file, counted independently
    with gzip.open(data_dir / folder / name, "rt", encoding="utf-8") as f:
        raw = sum(1 for line in f if line.strip() and not line.startswith("-DOCSTART-"))
    assert raw == n_tok


@pytest.mark.data
def test_conll2000_label_sets(data_dir):
    tr = read_conll(data_dir / "conll2000-chunking" / "train.txt.gz")
    te = read_conll(data_dir / "conll2000-chunking" / "test.txt.gz")
    both = LabelAlphabet.fit(tr.labels + te.labels)
    assert len(both) == 23 and "I-LST" not in LabelAlphabet.fit(tr.labels).labels
    pos = {row[1] for s in tr.inputs + te.inputs for row in s}
    assert len(pos) == 44
    assert max(len(s) for s in tr.inputs + te.inputs) == 78
    assert np.all(np.array([len(s) for s in tr.inputs]) > 0)


# ---------------------------------------------------------------- CRF++'s column rule and encodings
def test_columns_split_on_spaces_and_tabs_only(tmp_path):
    from problems.io.conll import split_columns

    assert split_columns("a \t b\tc  ") == ["a", "b", "c"]
    assert split_columns("\u3000\ty\tB") == ["\u3000", "y", "B"]  # CRF++'s example/seg
    assert split_columns("a\u00a0b c\r") == ["a\u00a0b", "c"]  # NBSP is a character; a final \r a line end
    assert split_columns(" \t ") == []
    p = tmp_path / "seg.data"
    p.write_text("毎\tk\tB\n\u3000\ty\tB\n\n日 k I\n", encoding="utf-8")
    c = read_crfpp(p)
    assert c.inputs == [[("毎", "k"), ("\u3000", "y")], [("日", "k")]] and c.labels == [["B", "B"], ["I"]]


def test_column_count_error_names_the_other_whitespace(tmp_path):
    p = tmp_path / "bad.data"
    p.write_text("a b O\nc\u3000d O\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_conll(p)
    e = err.value
    assert e.path == str(p) and e.line == 2 and "U+3000" in e.message and "spaces and tabs" in e.message


@pytest.mark.parametrize(
    "encoding, text",
    [("latin-1", "Señor NP B-PER\nJosé NP I-PER\n"), ("euc-jp", "病院 M1 名詞-一般 O\n、 S2 記号-読点 O\n")],
)
def test_read_in_another_encoding(tmp_path, encoding, text):
    p = tmp_path / "f.txt"
    p.write_bytes(("x x" + " x" * (text.split("\n")[0].count(" ") - 1) + "\n" + text).encode(encoding))
    c = read_conll(p, encoding=encoding)
    assert c.inputs[0][1][0] == text.split()[0]
    with pytest.raises(InputError) as err:  # read as UTF-8: the file, the line, the option to use
        read_conll(p)
    e = err.value
    assert e.path == str(p) and e.line == 2 and e.field == "encoding"
    assert "UTF-8" in e.message and "--encoding" in e.message and "encoding=" in e.message


def test_check_encoding():
    from problems.io._open import check_encoding

    assert check_encoding("EUC-JP") == "euc_jp" and check_encoding("latin-1") == "iso8859-1"
    with pytest.raises(InputError, match="unknown encoding"):
        check_encoding("klingon-8")
    for enc in ("utf-16", "utf-32"):
        with pytest.raises(InputError, match="ASCII-compatible"):
            check_encoding(enc)


def test_writer_keeps_unicode_whitespace_cells(tmp_path):
    out = tmp_path / "o.txt"
    write_columns(out, [[("\u3000", "y")]], [["B"]])
    assert read_conll(out).inputs == [[("\u3000", "y")]]
    with pytest.raises(InputError, match="separates columns"):
        write_columns(out, [[("a b", "y")]])
