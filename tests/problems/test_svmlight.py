"""SVMlight reader/writer: round trips, gzip, and errors naming the file and the line."""

import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from problems.io import read_svmlight, write_svmlight
from problems.io.svmlight import MAX_INDEX, read_svmlight_file


def _write(tmp_path, text, name="data.svm"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_reads_plain_file_with_comments_and_qid(tmp_path):
    p = _write(tmp_path, "# header\n1 1:2 3:4 # c\n\n-1 qid:7 2:0.5\n")
    X, y = read_svmlight(p)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64
    np.testing.assert_array_equal(X.toarray(), [[2, 0, 4], [0, 0.5, 0]])
    np.testing.assert_array_equal(y, [1, -1])
    assert read_svmlight(p, n_features=6).X.shape == (2, 6)
    X0, _ = read_svmlight(_write(tmp_path, "1 0:1 2:3\n", "z.svm"), zero_based=True)
    np.testing.assert_array_equal(X0.toarray(), [[1, 0, 3]])


@pytest.mark.parametrize("name", ["data.svm.gz", "data_gz_without_suffix.svm"])
def test_gzip_is_transparent(tmp_path, name):
    p = tmp_path / name
    with gzip.open(p, "wt") as f:
        f.write("1 1:2\n-1 2:3\n")
    X, y = read_svmlight(p)
    np.testing.assert_array_equal(X.toarray(), [[2, 0], [0, 3]])


@settings(max_examples=25)
@given(
    seed=st.integers(0, 10_000), n=st.integers(1, 12), d=st.integers(1, 6), zero_based=st.booleans(), gz=st.booleans()
)
def test_write_read_round_trip(tmp_path_factory, seed, n, d, zero_based, gz):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.5), 6)
    X[:, -1] = 1.5  # fix the width: the reader infers n_features from the largest index
    y = rng.integers(-3, 4, n).astype(float)
    p = tmp_path_factory.mktemp("rt") / ("d.svm.gz" if gz else "d.svm")
    write_svmlight(p, sp.csr_matrix(X) if seed % 2 else X, y, zero_based=zero_based)
    X2, y2 = read_svmlight(p, zero_based=zero_based)
    np.testing.assert_allclose(X2.toarray(), X, rtol=1e-15)
    np.testing.assert_array_equal(y2, y)


@pytest.mark.parametrize(
    "text, line, match",
    [
        ("1 1:2\n-1 2:x\n", 2, "cannot parse 'x'"),
        ("1 1:2\nabc 1:1\n", 2, "label: cannot parse 'abc'"),
        ("1 1:2\n1 1:1\n-1 0:1\n", 3, "invalid feature index 0"),
        ("1 3:2 1:4\n", 1, "increasing and unique"),
        ("1 1:2 1:4\n", 1, "increasing and unique"),
        ("1 1:2\n1 1 2\n", 2, "expected <index>:<value>"),
        ("1 1:2\n1 a:2\n", 2, "not an integer"),
        ("1 1:2\n\n# c\n1 1:nan\n", 4, "non-finite value 'nan'"),
        ("inf 1:2\n", 1, "non-finite"),
        ("1 1:2:3\n", 1, "cannot parse"),
        ("1 -2:3\n", 1, "invalid feature index -2"),
    ],
)
def test_malformed_lines_are_named(tmp_path, text, line, match):
    p = _write(tmp_path, text)
    with pytest.raises(InputError, match=match) as info:
        read_svmlight(p)
    assert info.value.line == line
    assert info.value.path == str(p)
    assert str(info.value).startswith(f"{p}:{line}: ")


def test_index_beyond_n_features_names_the_line(tmp_path):
    p = _write(tmp_path, "1 1:2\n-1 5:1\n")
    with pytest.raises(InputError, match="exceeds n_features=3") as info:
        read_svmlight(p, n_features=3)
    assert info.value.line == 2


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_file(tmp_path, text):
    with pytest.raises(InputError, match="no examples"):
        read_svmlight(_write(tmp_path, text))


def test_missing_file_and_bad_bytes(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_svmlight(tmp_path / "nope.svm")
    p = tmp_path / "bin.svm"
    p.write_bytes(b"1 1:2\n\xff\xfe 1:3\n")
    with pytest.raises(InputError) as info:
        read_svmlight(p)
    assert info.value.line == 2
    t = tmp_path / "trunc.svm.gz"
    t.write_bytes(gzip.compress(b"1 1:2\n" * 100)[:30])
    with pytest.raises(InputError, match="gzip"):
        read_svmlight(t)


def test_write_refuses_bad_input(tmp_path):
    with pytest.raises(InputError, match="samples"):
        write_svmlight(tmp_path / "a.svm", np.ones((3, 2)), np.ones(2))
    with pytest.raises(InputError, match="NaN"):
        write_svmlight(tmp_path / "a.svm", np.array([[np.nan, 1.0]]), np.ones(1))
    with pytest.raises(InputError, match="numbers"):
        write_svmlight(tmp_path / "a.svm", np.ones((1, 2)), np.array(["a"]))


# -- index base: "auto" as scikit-learn's load_svmlight_file ------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 8),
    d=st.integers(2, 6),
    written_zero_based=st.booleans(),
    first_column=st.booleans(),
)
def test_auto_base_agrees_with_scikit_learn(tmp_path_factory, seed, n, d, written_zero_based, first_column):
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file

    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.6), 4)
    X[:, -1] = 2.0
    X[:, 0] = 0.0
    X[0, 0] = 1.0 if first_column else 0.0
    y = rng.integers(0, 3, n).astype(float)
    p = tmp_path_factory.mktemp("auto") / "d.svm"
    dump_svmlight_file(X, y, str(p), zero_based=written_zero_based)
    ours = read_svmlight_file(p, zero_based="auto")
    X_ref, y_ref = load_svmlight_file(str(p), zero_based="auto")
    np.testing.assert_array_equal(ours.X.toarray(), X_ref.toarray())
    np.testing.assert_array_equal(ours.y, y_ref)
    # the base is found when the file says it: 0-based with an index 0, else 1-based
    assert ours.zero_based == (written_zero_based and first_column)
    if ours.zero_based or not written_zero_based:
        np.testing.assert_array_equal(ours.X.toarray(), X)
    # the Python path (a byte-order mark sends the file there) decides the same way
    bom = p.with_name("bom.svm")
    bom.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    slow = read_svmlight_file(bom, zero_based="auto")
    assert slow.zero_based == ours.zero_based
    np.testing.assert_array_equal(slow.X.toarray(), ours.X.toarray())


def test_dump_svmlight_file_defaults_read_with_auto(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])
    p = tmp_path / "sk.svm"
    dump_svmlight_file(X, [1, -1], str(p))  # scikit-learn's defaults: 0-based
    with pytest.raises(InputError, match="invalid feature index 0.*zero_based=True or 'auto'") as info:
        read_svmlight(p)
    assert info.value.line == 1
    data = read_svmlight_file(p)
    assert data.zero_based is True
    np.testing.assert_array_equal(data.X.toarray(), X)
    np.testing.assert_array_equal(read_svmlight(p, zero_based="auto").X.toarray(), X)
    for bad in ("yes", 1, None):
        with pytest.raises(InputError, match="True, False or 'auto'"):
            read_svmlight_file(p, zero_based=bad)


# -- one rule for the largest index, on both reader paths ---------------------------------------------

_BOUNDARY = [0, 1, 2, MAX_INDEX - 1, MAX_INDEX, MAX_INDEX + 1, MAX_INDEX + 2, 2**32, 2**40]


@settings(max_examples=80, deadline=None)
@given(
    indices=st.lists(st.one_of(st.sampled_from(_BOUNDARY), st.integers(0, 50)), min_size=1, max_size=4, unique=True),
    label=st.sampled_from(["1", "-1", "3", "0.5"]),
    qid=st.booleans(),
    zero_based=st.sampled_from([False, True, "auto"]),
)
def test_index_range_is_one_rule_on_both_paths(tmp_path_factory, indices, label, qid, zero_based):
    indices = sorted(indices)
    line = " ".join([label, *(["qid:3"] if qid else []), *(f"{i}:1.5" for i in indices)])
    lowest = 1 if zero_based is False else 0
    accepted = lowest <= indices[0] and indices[-1] <= MAX_INDEX
    d = tmp_path_factory.mktemp("idx")
    variants = {
        "plain": line + "\n",  # scikit-learn's parser
        "comment": line + " # a comment\n",
        "underscore comment": line + " # a_b\n",  # the Python reader
        "bom": "\ufeff" + line + "\n",  # the Python reader
    }
    outcomes = {}
    for name, text in variants.items():
        p = d / f"{name.replace(' ', '_')}.svm"
        p.write_text(text, encoding="utf-8")
        try:
            data = read_svmlight_file(p, zero_based=zero_based)
        except InputError as exc:
            assert exc.line == 1 and exc.field.startswith("token")
            outcomes[name] = ("refused", exc.message)
        else:
            outcomes[name] = ("read", tuple(data.X.indices.tolist()), data.X.shape, data.zero_based)
    assert len(set(outcomes.values())) == 1, outcomes
    outcome = outcomes["plain"]
    assert (outcome[0] == "read") == accepted, (line, outcome)
    if not accepted:
        assert "exceeds the largest index accepted" in outcome[1] or "invalid feature index" in outcome[1]
