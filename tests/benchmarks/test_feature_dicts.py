"""benchmarks/feature_dicts.py on a few CoNLL-2000 sentences: every arm runs on the same dicts, the page
and its re-render."""

import json

import pytest

pytestmark = pytest.mark.data


def test_tutorial_features():
    from benchmarks.feature_dicts import sent2features

    f = sent2features([("He", "PRP"), ("reckons", "VBZ")])
    assert f[0]["BOS"] is True and "EOS" not in f[0] and f[1]["EOS"] is True
    assert f[1]["-1:word.lower()"] == "he" and f[0]["+1:postag[:2]"] == "VB" and f[0]["word.istitle()"]
    assert f[0]["bias"] == 1.0 and f[1]["word[-3:]"] == "ons"


def test_short_run_writes_the_page(tmp_path, data_dir):
    from benchmarks import feature_dicts

    out, js = tmp_path / "fd.md", tmp_path / "fd.json"
    assert feature_dicts.main(["--n-sentences", "40", "--out", str(out), "--json", str(js)]) == 0
    saved = json.loads(js.read_text())
    arms = saved["arms"]
    assert [a["arm"] for a in arms][0] == "SequenceTagger(), plain defaults" and len(arms) == 3
    assert saved["meta"]["n_train"] == 40
    for a in arms:
        assert 0.0 <= a["test_chunk_f1"] <= 100.0 and a["fit_seconds"] > 0
    names = {k for k, _ in arms[0]["template_weights"]}
    assert {"word.lower()", "postag", "-1:word.lower()", "BOS", "bias", "B"} <= names  # the dict keys
    page = out.read_text()
    assert page.startswith("# sklearn-crfsuite's feature dicts")
    assert "Command: `python -m benchmarks.feature_dicts" in page
    again = tmp_path / "again.md"
    assert feature_dicts.main(["--render", str(js), "--out", str(again)]) == 0
    assert again.read_text() == page
