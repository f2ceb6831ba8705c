"""Compressed input (issue 39): gzip, bzip2 and xz read by every reader, whatever the file's name;
other compressions refused with a message saying which; a corrupt stream named with its line."""

import bz2
import gzip
import lzma
import zipfile

import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems.cli.main import main
from problems.demo_data import make_binary
from problems.io._open import compression_of, iter_lines
from problems.io.conll import read_conll
from problems.io.conllu import read_conllu
from problems.io.sniff import sniff_format
from problems.io.svmlight import read_svmlight, write_svmlight

COLUMNS = "He PRP B-NP\nruns VBZ B-VP\n\nShe PRP B-NP\n"
CONLLU = "1\tHe\the\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\t_\n\n"
COMPRESS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}
SUFFIX = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz"}


@pytest.mark.parametrize("kind", sorted(COMPRESS))
@pytest.mark.parametrize("named", [True, False])
def test_text_readers_read_every_compression(tmp_path, kind, named):
    """By the magic bytes, with or without the suffix; the same records as the plain file."""
    suffix = SUFFIX[kind] if named else ".txt"
    cols, tree = tmp_path / f"c{suffix}", tmp_path / f"t{suffix}"
    cols.write_bytes(COMPRESS[kind](COLUMNS.encode()))
    tree.write_bytes(COMPRESS[kind](CONLLU.encode()))
    (tmp_path / "plain.txt").write_text(COLUMNS)
    assert read_conll(cols).inputs == read_conll(tmp_path / "plain.txt").inputs
    assert read_conll(cols).labels == [["B-NP", "B-VP"], ["B-NP"]]
    assert [list(s.heads) for s in read_conllu(tree)] == [[2, 0]]
    assert sniff_format(cols).format == "columns" and sniff_format(tree).format == "conllu"


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_svmlight_reads_every_compression(tmp_path, kind):
    b = make_binary(n_samples=30, n_features=5, n_test=5, seed=0)
    plain = tmp_path / "p.svm"
    write_svmlight(plain, b.X_train, b.y_train)
    packed = tmp_path / f"p.svm{SUFFIX[kind]}"
    packed.write_bytes(COMPRESS[kind](plain.read_bytes()))
    X, y = read_svmlight(packed)
    X0, y0 = read_svmlight(plain)
    assert np.array_equal(y, y0) and (X != X0).nnz == 0


def test_cli_trains_on_a_bz2_and_an_xz_file(tmp_path, capsys):
    """The binary task (no --encoding) on bzip2 / xz files: no "invalid UTF-8 ... --encoding"."""
    b = make_binary(n_samples=60, n_features=5, n_test=20, seed=1)
    plain = tmp_path / "tr.svm"
    write_svmlight(plain, b.X_train, b.y_train)
    for kind in ("bzip2", "xz"):
        packed = tmp_path / f"tr.svm{SUFFIX[kind]}"
        packed.write_bytes(COMPRESS[kind](plain.read_bytes()))
        model = tmp_path / f"{kind}.npz"
        assert main(["train", "--task", "binary", "--train", str(packed), "--model", str(model)]) == 0, kind
        assert main(["evaluate", "--model", str(model), "--test", str(packed)]) == 0
        err = capsys.readouterr().err
        assert "UTF-8" not in err and "encoding" not in err


@pytest.mark.parametrize(
    "name, head",
    [
        ("zip", None),
        ("zstd", b"\x28\xb5\x2f\xfd\x00\x00"),
        ("7z", b"7z\xbc\xaf\x27\x1c\x00\x04"),
        ("lz4", b"\x04\x22\x4d\x18\x64\x40"),
    ],
)
def test_other_compressions_are_refused_by_name(tmp_path, name, head, capsys):
    p = tmp_path / "data.bin"
    if head is None:
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("train.txt", COLUMNS)
    else:
        p.write_bytes(head + b"\x00" * 32)
    with pytest.raises(InputError, match=f"a {name} file: this compression is not read") as info:
        read_conll(p)
    assert info.value.path == str(p) and "gzip" in str(info.value) and "decompress it first" in str(info.value)
    assert main(["train", "--task", "binary", "--train", str(p), "--model", str(tmp_path / "m.npz")]) == 2
    err = capsys.readouterr().err
    assert f"a {name} file" in err and "UTF-8" not in err


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_a_truncated_stream_names_the_compression_and_the_line(tmp_path, kind):
    data = COMPRESS[kind](("tok NN O\n" * 20000).encode())
    p = tmp_path / f"cut{SUFFIX[kind]}"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=f"corrupt or truncated {kind} data") as info:
        list(iter_lines(p))
    assert info.value.path == str(p) and info.value.line is not None and info.value.line >= 1


def test_compression_of_needs_the_whole_bzip2_signature():
    assert compression_of("a.txt", b"BZh91AY&SY") == "bzip2"
    assert compression_of("a.txt", b"BZh is a word") is None  # a text file may start with 'BZh'
    assert compression_of("a.bz2", b"plain text") == "bzip2"  # so named: the decompressor will say it is not
    assert compression_of("a.txt", b"\xfd7zXZ\x00\x00") == "xz"
