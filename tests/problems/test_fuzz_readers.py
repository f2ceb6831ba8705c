"""Fuzzing every file reader: any byte string either reads or raises the package's own error.

For each reader, hypothesis generates random bytes and mutations of a small valid file
(truncation, byte flips, inserted tabs / newlines / CRLF / BOM / invalid UTF-8 / huge or
non-finite numbers / format keywords, deleted and duplicated spans), optionally gzip'ed,
gzip-truncated or gzip-corrupted, and checks that reading either succeeds (and then the
result satisfies the reader's contract) or raises a :class:`cutplane.exceptions.CutplaneError`
subclass; any other exception is a crash. The short run (~150 examples per reader) is part
of the suite; ``-m slow`` runs 10,000 examples per reader.
"""

import gzip
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cutplane.exceptions import CutplaneError
from problems.io.conll import read_conll, read_crfpp
from problems.io.conllu import read_conllu
from problems.io.ocr import read_ocr_letters
from problems.io.segmentation import read_segmented, read_segmented_as_tags, read_word_list
from problems.io.svmlight import read_svmlight
from problems.sequence.templates import read_templates


def _ocr_line(lid, letter, nxt, wid, pos, fold):
    px = [(lid * 7 + j) % 3 == 0 for j in range(128)]
    return "\t".join(map(str, [lid, letter, nxt, wid, pos, fold] + [int(v) for v in px])) + "\t\n"


SEEDS = {
    "conll": (b"-DOCSTART- -X- O\n\nConfidence NN B-NP\nin IN B-PP\nthe DT B-NP\n\npound NN I-NP\nis VBZ B-VP\n\n"),
    "crfpp": b"He PRP B-NP\nreckons VBZ B-VP\n\nthe DT B-NP\ncurrent JJ I-NP\n",
    "conllu": (
        b"# sent_id = 1\n# text = Han kom hjem.\n"
        b"1\tHan\than\tPRON\t_\t_\t2\tnsubj\t_\t_\n"
        b"2-3\tkomhjem\t_\t_\t_\t_\t_\t_\t_\t_\n"
        b"2\tkom\tkomme\tVERB\t_\t_\t0\troot\t_\t_\n"
        b"3\thjem\thjem\tADV\t_\t_\t2\tadvmod\t_\t_\n"
        b"3.1\tx\tx\tX\t_\t_\t_\t_\t_\t_\n"
        b"4\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\tSpaceAfter=No\n\n"
        b"1\tJa\tja\tINTJ\t_\t_\t0\troot\t_\t_\n\n"
    ),
    "svmlight": b"# comment\n1 1:0.5 3:-2 7:1e-3\n-1 qid:3 2:1.5 # tail\n+1 4:2\n",
    "segmented": "\ufeff\u4e2d\u56fd  \u4eba\u6c11 \u94f6\u884c\r\n\r\n\u6211 \u7231 \u5317\u4eac\r\n".encode(),
    "ocr": "".join(
        [_ocr_line(1, "o", 2, 1, 1, 0), _ocr_line(2, "k", -1, 1, 2, 0), _ocr_line(3, "z", -1, 2, 1, 9)]
    ).encode(),
    "templates": b"# chunking\nU00:%x[-2,0]\nU01:%x[0,0]/%x[1,1]\n\nU\nB\n",
}

TOKENS = [
    b"\t",
    b"\n",
    b"\n\n",
    b"\r\n",
    b"\r",
    b" ",
    b"  ",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\xe4\xb8",
    b"\xed\xa0\x80",
    b"\x00",
    b"9" * 25,
    b"9" * 5000,
    b"-9223372036854775809",
    b"nan",
    b"inf",
    b"-inf",
    b"1e400",
    b"-1",
    b"0",
    b"1_0",
    "\u00b2".encode(),
    "\u0663".encode(),
    "\u3000".encode(),
    "\u2028".encode(),
    b"#",
    b"# ",
    b"_",
    b":",
    b"qid:",
    b"qid:x",
    b"-DOCSTART-",
    b"%x[",
    b"%x[0,-1]",
    b"%x[99999999999999999999,0]",
    b"1-2",
    b"1.1",
    b"B",
    b"U",
    b"0:1",
    b"1:nan",
    b"a",
    b"2147483648",
    b"99999999999:1",
    b"1_0:1",
    b"1:1_0",
]

# per format: field separator and field values for field-level mutations (semantic damage:
# heads forming cycles, broken OCR word links, bad indices, wrong labels, ...)
FIELDS = {
    "conll": (b" ", [b"a", b"NN", b"B-NP", b"I-NP", b"O", b"-DOCSTART-", b"", b"x y"]),
    "crfpp": (b" ", [b"a", b"NN", b"B-NP", b"O", b"", b"x y"]),
    "conllu": (
        b"\t",
        [
            b"0",
            b"1",
            b"2",
            b"3",
            b"4",
            b"5",
            b"-1",
            b"1-2",
            b"2.1",
            b"3-2",
            b"_",
            b"",
            b"x",
            b"01",
            b"\xc2\xb2",
            b"99999999999999999999",
            b"1\t2",
        ],
    ),
    "svmlight": (
        b" ",
        [
            b"1",
            b"-1",
            b"+1",
            b"1:2",
            b"2:0.5",
            b"3:-1e300",
            b"qid:1",
            b"qid:",
            b"#",
            b"3:nan",
            b"0:1",
            b"1_0:1",
            b"2147483647:1",
            b"4:1e400",
            b"1:1:1",
            b"",
        ],
    ),
    "segmented": (b" ", [b"\xe4\xb8\xad", b"a", b"", b"\xe3\x80\x80", b"  "]),
    "ocr": (
        b"\t",
        [
            b"0",
            b"1",
            b"2",
            b"3",
            b"-1",
            b"9",
            b"10",
            b"a",
            b"z",
            b"A",
            b"",
            b"1.0",
            b"x",
            b"99999999999999999999",
            b"\t",
        ],
    ),
    "templates": (
        b":",
        [b"U00", b"U01", b"B", b"U", b"%x[0,0]", b"%x[-1,1]/%x[0,0]", b"%x[0,-1]", b"%x[", b"", b"%x[1,2]%", b"B01"],
    ),
}


@st.composite
def mutations(draw, seed: bytes):
    """A valid file damaged by 1-5 random edits."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 5))):
        op = draw(st.sampled_from(["truncate", "flip", "insert", "insert", "delete", "duplicate", "replace"]))
        pos = draw(st.integers(0, len(data)))
        if op == "truncate":
            del data[pos:]
        elif op == "flip" and data:
            data[min(pos, len(data) - 1)] ^= draw(st.integers(1, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from(TOKENS))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 16))]
        elif op == "duplicate":
            end = draw(st.integers(pos, len(data)))
            data[end:end] = data[pos:end]
        elif op == "replace" and data:
            end = min(len(data), pos + draw(st.integers(1, 4)))
            data[pos:end] = draw(st.sampled_from(TOKENS))
    return bytes(data)


@st.composite
def field_mutations(draw, seed: bytes, fmt: str):
    """A valid file with 1-4 fields (between the format's separators) replaced."""
    sep, values = FIELDS[fmt]
    lines = seed.split(b"\n")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        fields = lines[i].split(sep)
        j = draw(st.integers(0, len(fields) - 1))
        fields[j] = draw(st.sampled_from(values))
        lines[i] = sep.join(fields)
    return b"\n".join(lines)


@st.composite
def packings(draw, content: bytes):
    """Plain, gzip'ed, truncated gzip or corrupted gzip bytes of ``content``."""
    how = draw(st.sampled_from(["plain", "plain", "gzip", "gzip-truncated", "gzip-flipped"]))
    if how == "plain":
        return content
    packed = bytearray(gzip.compress(content, mtime=0))
    if how == "gzip-truncated":
        return bytes(packed[: draw(st.integers(0, len(packed) - 1))])
    if how == "gzip-flipped":
        pos = draw(st.integers(0, len(packed) - 1))
        packed[pos] ^= draw(st.integers(1, 255))
    return bytes(packed)


def file_bytes(fmt: str):
    seed = SEEDS[fmt]
    content = st.one_of(
        st.binary(max_size=400), mutations(seed), field_mutations(seed, fmt), field_mutations(seed, fmt), st.just(seed)
    )
    return content.flatmap(packings)


# -- what a successful read must satisfy ------------------------------------------------------------
def _check_conll(c):
    assert c.labels is not None and len(c.labels) == len(c.inputs) == len(c.first_lines) >= 1
    for rows, labels in zip(c.inputs, c.labels):
        assert len(rows) == len(labels) >= 1
        assert len({len(r) for r in rows}) == 1
        # columns are split on spaces and tabs only, as in CRF++ (other whitespace belongs to a cell)
        assert all(cell and not any(ch in " \t\n" for ch in cell) for r in rows for cell in r)


def _check_conllu(sents):
    assert len(sents) >= 1
    for s in sents:
        n = len(s)
        assert n >= 1 and s.heads.shape == (n,) and s.heads.dtype == np.int64
        assert np.all((s.heads >= 0) & (s.heads <= n))
        for k in range(1, n + 1):  # every word reaches the root: a tree
            v, steps = k, 0
            while v != 0:
                v, steps = int(s.heads[v - 1]), steps + 1
                assert steps <= n


def _check_svmlight(d):
    X, y = d
    assert X.shape[0] == y.shape[0] >= 1 and X.shape[1] >= 1
    assert np.all(np.isfinite(X.data)) and np.all(np.isfinite(y))
    assert X.has_sorted_indices


def _check_ocr(d):
    assert d.n_letters >= 1 and d.pixels.shape == (d.n_letters, 128)
    assert set(np.unique(d.pixels)) <= {0, 1} and np.all((d.labels >= 0) & (d.labels < 26))
    assert d.word_ptr[0] == 0 and d.word_ptr[-1] == d.n_letters and np.all(np.diff(d.word_ptr) >= 1)
    assert np.all((d.folds >= 0) & (d.folds <= 9))


def _check_segmented(sents):
    assert len(sents) >= 1 and all(w and not any(ch.isspace() for ch in w) for s in sents for w in s)


def _check_tags(c):
    assert len(c.inputs) >= 1
    for rows, tags in zip(c.inputs, c.labels):
        assert len(rows) == len(tags) >= 1 and set(tags) <= set("BMES")


def _check_words(words):
    assert all(w == w.strip() and w for w in words)


def _check_templates(tpls):
    # names may repeat and any number of B templates is allowed, as in CRF++ (issue 23); a name is
    # a prefix of its line without whitespace, and the kind is the line's first character
    assert len(tpls) >= 1 and all(c >= 0 for t in tpls for _, c in t.macros)
    for t in tpls:
        assert t.kind == t.text[0] in "UB" and t.text.startswith(t.name) and t.name
        assert not any(ch.isspace() for ch in t.name)


READERS = {
    "conll": (read_conll, _check_conll, "conll"),
    "crfpp": (read_crfpp, _check_conll, "crfpp"),
    "conllu": (read_conllu, _check_conllu, "conllu"),
    "svmlight": (read_svmlight, _check_svmlight, "svmlight"),
    "segmented": (read_segmented, _check_segmented, "segmented"),
    "segmented_as_tags": (read_segmented_as_tags, _check_tags, "segmented"),
    "word_list": (read_word_list, _check_words, "segmented"),
    "ocr": (read_ocr_letters, _check_ocr, "ocr"),
    "templates": (read_templates, _check_templates, "templates"),
}


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory(prefix="cutplane_fuzz_") as d:
        yield Path(d)


def _read_or_own_error(reader, check, path: Path, data: bytes):
    path.write_bytes(data)
    try:
        out = reader(path)
    except CutplaneError as exc:
        assert str(path) in str(exc), f"the error does not name the file: {exc}"
        return
    check(out)


def _fuzz(name, scratch, max_examples):
    reader, check, seed = READERS[name]

    @settings(max_examples=max_examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=file_bytes(seed))
    def run(data):
        _read_or_own_error(reader, check, scratch / f"{name}.dat", data)

    run()


@pytest.mark.parametrize("name", sorted(READERS))
def test_seed_files_read(name, scratch):
    reader, check, seed = READERS[name]
    path = scratch / f"{name}.seed"
    for data in (SEEDS[seed], gzip.compress(SEEDS[seed])):
        path.write_bytes(data)
        check(reader(path))


@pytest.mark.parametrize("name", sorted(READERS))
def test_fuzz_reader_short(name, scratch):
    _fuzz(name, scratch, 150)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(READERS))
def test_fuzz_reader_long(name, scratch):
    _fuzz(name, scratch, 10_000)
