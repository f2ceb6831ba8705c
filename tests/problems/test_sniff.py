"""problems.io.sniff: what a file looks like, for refusing a model on another task's data."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from problems.io.conll import write_columns
from problems.io.conllu import write_conllu
from problems.io.sniff import sniff_format
from problems.io.svmlight import write_svmlight
from tests.problems.test_dependency_parser import make_treebank


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), n=st.integers(1, 6), d=st.integers(1, 5), zero_based=st.booleans())
def test_written_files_are_recognised(tmp_path_factory, seed, n, d, zero_based):
    tmp = tmp_path_factory.mktemp("sniff")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    write_svmlight(tmp / "a.svm", X, rng.integers(-1, 2, n), zero_based=zero_based, comment="made here")
    assert sniff_format(tmp / "a.svm").format == "svmlight"
    words = [[(f"w{i}", f"P{i % 3}") for i in range(rng.integers(1, 5))] for _ in range(2)]
    write_columns(tmp / "c.txt", words, [["O"] * len(s) for s in words])
    assert sniff_format(tmp / "c.txt").format == "columns"
    write_conllu(tmp / "t.conllu", make_treebank(2, seed=seed))
    found = sniff_format(tmp / "t.conllu")
    assert found.format == "conllu" and found.line is not None and found.text.startswith("1\t")


def test_what_is_not_conclusive_is_text(tmp_path):
    cases = {
        "seg.txt": "他们 是 学生\n今天 很 好\n",  # segmented text of equal lines, no sentence break
        "one.txt": "He PRP B-NP\nran VBD B-VP\n",  # one sentence of columns: could be either
        "times.txt": "at IN O\n12:30 CD O\n\npm NN O\n",  # a token with a colon is no SVMlight pair
        "empty.txt": "\n# only a comment\n",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert sniff_format(tmp_path / "seg.txt").format == "text"
    assert sniff_format(tmp_path / "one.txt").format == "text"
    assert sniff_format(tmp_path / "times.txt").format == "columns"
    assert sniff_format(tmp_path / "empty.txt") == ("text", None, "")
    # a malformed SVMlight line among good ones is still SVMlight: its reader names the line
    (tmp_path / "bad.svm").write_text("1 1:2\n-1 3:1\n1 1 2\n")
    assert sniff_format(tmp_path / "bad.svm")[:2] == ("svmlight", 1)
