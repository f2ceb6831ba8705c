"""Hostile input at the entry points: every reader against each kind of bad file, the shared
validation checks, and the predict-time policy for features and labels unseen in training."""

import gzip
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import CutplaneError, InputError
from problems.io.conll import read_conll, read_crfpp
from problems.io.conllu import read_conllu
from problems.io.ocr import read_ocr_letters
from problems.io.segmentation import read_segmented, read_segmented_as_tags, read_word_list
from problems.io.svmlight import read_svmlight
from problems.sequence.feature_index import FeatureIndex, LabelAlphabet
from problems.sequence.templates import read_templates
from problems.solvers import CuttingPlane
from problems.validation import (
    UnseenLabelWarning,
    check_consistent_length,
    check_fraction,
    check_int,
    check_positive,
    check_sequences,
    warn_unseen_labels,
)


def _ocr(lid, letter, nxt, wid, pos, fold):
    return "\t".join(map(str, [lid, letter, nxt, wid, pos, fold] + [lid % 2] * 128)) + "\t\n"


# reader -> (function, a valid file, a line number at which to inject damage (1-based))
VALID = {
    "conll": (read_conll, "a NN B-NP\nb NN I-NP\n\nc VB B-VP\n"),
    "crfpp": (read_crfpp, "a NN B-NP\nb NN I-NP\n\nc VB B-VP\n"),
    "conllu": (
        read_conllu,
        "1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tb\tb\tX\t_\t_\t1\tdep\t_\t_\n\n1\tc\tc\tX\t_\t_\t0\troot\t_\t_\n",
    ),
    "svmlight": (read_svmlight, "1 1:0.5 2:1\n-1 2:3\n+1 1:2\n"),
    "segmented": (read_segmented, "\u4e2d\u56fd \u4eba\n\u6211 \u7231\n\u597d\n"),
    "segmented_as_tags": (read_segmented_as_tags, "\u4e2d\u56fd \u4eba\n\u6211 \u7231\n\u597d\n"),
    "word_list": (read_word_list, "\u4e2d\u56fd\n\u4eba\n\u6211\n"),
    "ocr": (read_ocr_letters, _ocr(1, "a", 2, 1, 1, 0) + _ocr(2, "b", -1, 1, 2, 0) + _ocr(3, "c", -1, 2, 1, 1)),
    "templates": (read_templates, "U00:%x[0,0]\nU01:%x[-1,1]\nB\n"),
}


def _result_key(name, out):
    """A comparable summary of what a reader returned."""
    if name in ("conll", "crfpp", "segmented_as_tags"):
        return out.inputs, out.labels
    if name == "conllu":
        return [(s.forms, s.heads.tolist()) for s in out]
    if name == "svmlight":
        return out.X.toarray().tolist(), out.y.tolist()
    if name == "ocr":
        return out.pixels.tolist(), out.labels.tolist(), out.word_ptr.tolist()
    if name == "templates":
        return [(t.name, t.macros) for t in out]
    return out


def _lines(text):
    return text.splitlines(keepends=True)


@pytest.mark.parametrize("name", sorted(VALID))
def test_bom_crlf_and_gzip_are_accepted_and_read_the_same(tmp_path, name):
    reader, text = VALID[name]
    plain = tmp_path / "plain"
    plain.write_text(text, encoding="utf-8")
    expected = _result_key(name, reader(plain))
    variants = {
        "bom": b"\xef\xbb\xbf" + text.encode(),
        "crlf": text.replace("\n", "\r\n").encode(),
        "gzip": gzip.compress(text.encode()),
        "bom-crlf-gzip": gzip.compress(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()),
    }
    for label, data in variants.items():
        p = tmp_path / label
        p.write_bytes(data)
        assert _result_key(name, reader(p)) == expected, label


@pytest.mark.parametrize("name", sorted(VALID))
def test_missing_file_directory_and_empty_file(tmp_path, name):
    reader, _ = VALID[name]
    for path, match in ((tmp_path / "nope", "not found|No such file"), (tmp_path, "directory")):
        with pytest.raises(InputError, match=match) as info:
            reader(path)
        assert info.value.path == str(path)
    for content in (b"", b"\n\n", gzip.compress(b"")):
        p = tmp_path / "empty"
        p.write_bytes(content)
        with pytest.raises(InputError, match="no |no template") as info:
            reader(p)
        assert info.value.path == str(p)


@pytest.mark.parametrize("name", sorted(VALID))
def test_bad_utf8_names_the_line(tmp_path, name):
    reader, text = VALID[name]
    lines = _lines(text)
    lines[1] = lines[1][:1] + "\udcff" + lines[1][1:]  # a lone 0xFF byte on line 2
    p = tmp_path / "bad"
    p.write_bytes("".join(lines).encode("utf-8", "surrogateescape"))
    with pytest.raises(InputError, match="UTF-8") as info:
        reader(p)
    assert (info.value.path, info.value.line, info.value.field) == (str(p), 2, "encoding")


@pytest.mark.parametrize("name", sorted(VALID))
def test_truncated_and_corrupt_gzip(tmp_path, name):
    reader, text = VALID[name]
    packed = gzip.compress(((text + "\n") * 200).encode())
    p = tmp_path / "t.gz"
    for data in (packed[: len(packed) // 2], packed[:12], packed[:-3] + b"\x00\x00\x00"):
        p.write_bytes(data)
        with pytest.raises(InputError, match="gzip") as info:
            reader(p)
        assert info.value.path == str(p)
    flipped = bytearray(packed)
    flipped[len(flipped) // 2] ^= 0xFF
    p.write_bytes(bytes(flipped))
    with pytest.raises(CutplaneError):  # a flip may decode to garbage text (a format error) or fail in zlib
        reader(p)


@pytest.mark.parametrize(
    "name, damaged, line, field",
    [
        ("conll", "a NN B-NP\nb NN\n", 2, "columns"),
        ("conllu", "1\ta\ta\tX\t_\t_\t2\tdep\t_\t_\n2\tb\tb\tX\t_\t_\t1\tdep\t_\t_\n", 1, "HEAD"),  # cycle
        ("conllu", "1\ta\ta\tX\t_\t_\t3\tdep\t_\t_\n", 1, "HEAD"),  # head out of range
        ("conllu", "1\ta\ta\tX\t_\t_\t1_0\tdep\t_\t_\n", 1, "HEAD"),
        ("conllu", "1\ta\ta\tX\t_\t_\t\u00b2\tdep\t_\t_\n", 1, "HEAD"),
        ("conllu", "\u00b9\ta\ta\tX\t_\t_\t0\troot\t_\t_\n", 1, "ID"),
        ("conllu", "1\ta\ta\tX\t_\t_\t" + "9" * 5000 + "\tdep\t_\t_\n", 1, "HEAD"),
        ("svmlight", "1 1:2\n1 1:nan\n", 2, "token 2"),
        ("svmlight", "1 1:2\ninf 1:1\n", 2, "label"),
        ("svmlight", "1 1:2\n1 99999999999:1\n", 2, "token 2"),
        ("svmlight", "1 1:2\n1 1_0:1\n", 2, "token 2"),
        ("svmlight", "1 1:2\n1 1:1_0\n", 2, "token 2"),
        ("svmlight", "1 1:2\n1 qid:x 1:1\n", 2, "qid"),
        ("svmlight", "1 1:2\n1 1:" + "9" * 5000 + "\n", 2, "token 2"),
        (
            "ocr",
            _ocr(1, "a", 2, 1, 1, 0) + _ocr(2, "b", -1, 1, 2, 0).replace("\t1\t2\t0", "\t1\t2\t" + "9" * 30),
            2,
            "fold",
        ),
        ("ocr", _ocr(1, "a", -1, 1, 1, 0).replace("1\ta", "1_0\ta", 1), 1, "id"),
        ("ocr", _ocr(1, "a", -1, 99999999999999999999, 1, 0), 1, "word_id"),
        ("templates", "U00:%x[0,0]\nU01:%x[" + "9" * 5000 + ",0]\n", 2, "template"),
        ("templates", "U00:%x[0,0]\nU01:%x[\u0663,0]\n", 2, "template"),
    ],
)
def test_malformed_content_names_file_line_and_field(tmp_path, name, damaged, line, field):
    reader, _ = VALID[name]
    p = tmp_path / "bad"
    p.write_text(damaged, encoding="utf-8")
    with pytest.raises(InputError) as info:
        reader(p)
    assert (info.value.path, info.value.line, info.value.field) == (str(p), line, field), str(info.value)
    assert len(str(info.value)) < 400  # huge tokens are shortened in the message


# -- validation checks ----------------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(10**30), 10**30),
        st.booleans(),
        st.none(),
        st.text(max_size=4),
    )
)
def test_check_positive_accepts_exactly_finite_positive_reals(value):
    ok = not isinstance(value, (bool, str)) and value is not None and np.isfinite(float(value)) and float(value) > 0
    if ok:
        assert check_positive(value, "C") == float(value)
    else:
        with pytest.raises(InputError) as info:
            check_positive(value, "C")
        assert info.value.field == "C"


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(st.integers(-(10**20), 10**20), st.floats(), st.booleans(), st.text(max_size=3)),
    st.integers(-5, 5),
    st.one_of(st.none(), st.integers(-5, 50)),
)
def test_check_int_bounds_and_types(value, lo, hi):
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= lo and (hi is None or value <= hi)
    if ok:
        assert check_int(value, "max_iter", min_value=lo, max_value=hi) == value
    else:
        with pytest.raises(InputError):
            check_int(value, "max_iter", min_value=lo, max_value=hi)
    if ok and abs(value) < 2**62:  # numpy integers are integers too
        assert check_int(np.int64(value), "n", min_value=lo, max_value=hi) == value


def test_check_fraction_and_absurd_values():
    assert check_fraction(0.5, "f") == 0.5 and check_fraction(1, "f") == 1.0
    for bad in (0, 1.5, -0.1, float("nan"), "0.5"):
        with pytest.raises(InputError):
            check_fraction(bad, "f")
    with pytest.raises(InputError, match="< 1"):
        check_fraction(1.0, "f", allow_one=False)
    with pytest.raises(InputError, match="<= 1000"):
        check_positive(1e300, "C", max_value=1000)


def test_check_consistent_length():
    import scipy.sparse as sp

    assert check_consistent_length([1, 2], np.zeros((2, 5)), sp.csr_matrix((2, 3))) == 2
    with pytest.raises(InputError, match="X: 3, y: 2") as info:
        check_consistent_length(np.zeros((3, 1)), [0, 1], names=("X", "y"))
    assert info.value.field == "y"
    with pytest.raises(InputError, match="sequence"):
        check_consistent_length([1], 5, names=("X", "y"))


@pytest.mark.parametrize(
    "X, y, match",
    [
        ([], None, "at least 1"),
        ("a b c", None, "list of sentences"),
        ([[("a", "NN")], []], None, "sentence 1 has no tokens"),
        ([[("a", "NN"), ("b",)]], None, "1 columns"),
        ([[("a", 3)]], None, "tuple of str"),
        ([[("a b", "NN")]], None, "whitespace"),
        ([[("", "NN")]], None, "empty cell"),
        ([[("a", "NN")]], [["B"], ["I"]], "inconsistent"),
        ([[("a", "NN")]], [["B", "I"]], "1 tokens but 2 labels"),
        ([[("a", "NN")]], [[None]], "non-empty str"),
        ([[("a", "NN")]], ["B"], "list of str"),
    ],
)
def test_check_sequences_refuses(X, y, match):
    with pytest.raises(InputError, match=match):
        check_sequences(X, y)


def test_check_sequences_accepts_and_normalises():
    X, y = check_sequences([[["a", "NN"], ("b", "VB")], ["c"]], [("B", "I"), ["O"]])
    assert X == [[("a", "NN"), ("b", "VB")], [("c",)]] and y == [["B", "I"], ["O"]]


# -- predict-time policy: unseen features ignored, unseen labels scored as wrong --------------------------
TRAIN = [[("the", "DT"), ("dog", "NN")], [("a", "DT"), ("cat", "NN"), ("runs", "VB")]]
TRAIN_Y = [["B", "I"], ["B", "I", "O"]]
TEMPLATES = "U00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,0]/%x[0,0]\nB\n"


def test_unseen_features_are_ignored_exactly():
    fi = FeatureIndex(TEMPLATES)
    fi.fit(TRAIN)
    test = [[("the", "DT"), ("zebra", "XX")], [("unknown", "YY")]]
    feats = fi.transform(test)
    # brute force: the ids of a token are those of its feature strings that are in the dictionary
    tpls = fi.templates
    t = 0
    for sent in test:
        cols = list(zip(*sent))
        for pos in range(len(sent)):
            strings = [tp.feature(cols, pos) for tp in tpls if tp.kind == "U"]
            expected = sorted(fi.vocabulary_[s] for s in strings if s in fi.vocabulary_)
            got = sorted(feats.indices[feats.indptr[t] : feats.indptr[t + 1]].tolist())
            assert got == expected
            t += 1
    assert feats.indptr[-1] == len(feats.indices) and feats.n_tokens == 3
    assert feats.indptr[3] - feats.indptr[2] == 0  # a token with only unseen features: no feature


def test_unseen_labels_encoded_as_minus_one_with_one_warning():
    alpha = LabelAlphabet.fit(TRAIN_Y)
    gold = [["B", "X-NEW", "I"], ["Z-NEW", "X-NEW"]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        codes = alpha.encode_unseen(gold, path="test.txt")
    assert codes.tolist() == [alpha.index["B"], -1, alpha.index["I"], -1, -1]
    unseen = [w for w in caught if issubclass(w.category, UnseenLabelWarning)]
    assert len(unseen) == 1 and len(caught) == 1
    msg = str(unseen[0].message)
    assert "test.txt" in msg and "'X-NEW' (2)" in msg and "'Z-NEW' (1)" in msg and "3 gold token" in msg
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning when every label is known
        assert alpha.encode_unseen(TRAIN_Y).tolist() == alpha.encode_corpus(TRAIN_Y).tolist()
    with pytest.raises(InputError, match="unknown label 'X-NEW'"):  # training data: an error
        alpha.encode_corpus(gold)
    assert warn_unseen_labels(TRAIN_Y, alpha.labels) == {}


def test_unseen_label_in_evaluation_is_scored_wrong_and_never_crashes():
    from problems.metrics.accuracy import token_accuracy
    from problems.metrics.chunking import chunk_f1
    from problems.sequence.tagger import SequenceTagger

    X = [[("the", "DT"), ("dog", "NN"), ("runs", "VB")], [("a", "DT"), ("cat", "NN")]] * 4
    Y = [["B-NP", "I-NP", "B-VP"], ["B-NP", "I-NP"]] * 4
    est = SequenceTagger("U00:%x[0,0]\nU01:%x[0,1]\nB\n", C=10.0, solver=CuttingPlane(eps=0.05)).fit(X, Y)
    test_X = [[("the", "DT"), ("zebra", "ZZ"), ("runs", "VB")], [("an", "XX"), ("owl", "YY")]]
    gold = [["B-NP", "I-NP", "B-ADJP"], ["B-PP", "I-PP"]]  # ADJP and PP were never seen
    pred = est.predict(test_X)  # unseen words: no crash, labels from the training set only
    assert all(lab in set(est.labels_.labels) for seq in pred for lab in seq)
    with pytest.warns(UnseenLabelWarning, match="'B-ADJP' \\(1\\).*'B-PP' \\(1\\).*'I-PP' \\(1\\)"):
        gold_codes = est.labels_.encode_unseen(gold)
    pred_codes = est.labels_.encode_corpus(pred)
    hits = int(np.sum(gold_codes == pred_codes))
    # the three unseen-label tokens can never be hits
    assert hits <= 2
    assert token_accuracy(gold, pred) == pytest.approx(100.0 * hits / 5)
    score = chunk_f1(gold, pred)  # chunk types never predicted: counted as missed, not an error
    n_gold_chunks = 3  # NP, ADJP, PP
    assert score.recall <= 100.0 * 1 / n_gold_chunks + 1e-9


def test_svmlight_without_any_feature(tmp_path):
    """Found by the long fuzz run: a file of labels only gave X of shape (n, 0)."""
    p = tmp_path / "labels_only.svm"
    p.write_text("1\n-1 # no features\n", encoding="utf-8")
    with pytest.raises(InputError, match="no example has a feature") as info:
        read_svmlight(p)
    assert info.value.path == str(p)
    X, y = read_svmlight(p, n_features=3)
    assert X.shape == (2, 3) and X.nnz == 0 and y.tolist() == [1.0, -1.0]
