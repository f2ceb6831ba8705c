"""SVMlight reader/writer: round trips, gzip, and errors naming the file and the line."""

import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from problems.io import read_svmlight, write_svmlight


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
