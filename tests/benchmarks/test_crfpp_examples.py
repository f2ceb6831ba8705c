"""benchmarks/crfpp_examples.py on a tiny CRF++-style example folder written here (EUC-JP for the
JapaneseNE-like one): every figure of the page comes from the run's JSON."""

import json

import numpy as np
import pytest

from benchmarks.crfpp_examples import EXAMPLES, main
from cutplane.exceptions import InputError


def _folder(root, name, encoding, words):
    rng = np.random.default_rng(0)
    d = root / name
    d.mkdir(parents=True)
    (d / "template").write_text("U00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,1]/%x[0,1]\n\nB\n", encoding=encoding)
    for part, n in (("train", 16), ("test", 6)):
        sents = []
        for _ in range(n):
            rows, prev = [], "O"
            for _ in range(int(rng.integers(2, 6))):
                w = words[int(rng.integers(0, len(words)))]
                pos = "N" if w in words[:2] else "V"
                lab = ("I-NP" if prev != "O" else "B-NP") if pos == "N" else "O"
                rows.append(f"{w}\t{pos}\t{lab}")
                prev = lab
            sents.append("\n".join(rows))
        (d / f"{part}.data").write_text("\n\n".join(sents) + "\n", encoding=encoding)


def test_page_from_a_run_on_tiny_folders(tmp_path):
    _folder(tmp_path, "chunking", "utf-8", ["dog", "cat", "runs", "\u3000"])
    _folder(tmp_path, "JapaneseNE", EXAMPLES["JapaneseNE"]["encoding"], ["病院", "記号", "走る", "見る"])
    out = tmp_path / "page.md"
    results = main([str(tmp_path), "--only", "chunking", "JapaneseNE", "--out", str(out)])
    assert [r["example"] for r in results] == ["chunking", "JapaneseNE"]
    text = out.read_text(encoding="utf-8")
    record = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert record["results"] == results
    for r in results:
        methods = [run["method"] for run in r["runs"]]
        assert methods[:2] == ["cutplane mtl", "cutplane ssvm"] and methods[2].startswith("CRFsuite")
        for run in r["runs"]:
            assert f"| {run['accuracy']:.2f} |" in text
            assert 0.0 <= run["accuracy"] <= 100.0
    # the page is rendered again from its JSON, byte for byte
    out.unlink()
    main([str(tmp_path), "--render", "--out", str(out)])
    assert out.read_text(encoding="utf-8") == text


def test_a_folder_that_is_not_crfpp_example_is_refused(tmp_path):
    with pytest.raises(InputError, match="example"):
        main([str(tmp_path), "--only", "seg", "--out", str(tmp_path / "p.md")])
