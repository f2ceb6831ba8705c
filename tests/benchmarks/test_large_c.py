"""benchmarks/large_c.py on a few sentences: one case with its CRFsuite run, the page, the re-render."""

import json

import pytest

pytest.importorskip("pycrfsuite")


@pytest.mark.data
def test_few_sentences_case_writes_page(tmp_path, data_dir):
    from benchmarks import large_c

    out, js = tmp_path / "lc.md", tmp_path / "lc.json"
    # glibc's settings: the test's process keeps its allocator (the default sets it as the CLI does)
    argv = ["--case", "conll2000-mtl", "--max-sentences", "30", "--C", "10", "--executor", "serial"]
    argv += ["--allocator", "glibc"]
    assert large_c.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    page = out.read_text()
    assert page.startswith("# Large C, certified to a 1% relative gap")
    assert "## conll2000-mtl: mtl on conll2000 (chunking templates), C = 10" in page
    assert "glibc's allocator settings" in page
    (rec,) = json.loads(js.read_text())
    ours, peer = rec["ours"], rec["crfsuite"]
    assert ours["status"] == "converged" and ours["relative_gap"] <= 0.01 and ours["certified_1pct"]
    assert ours["lower_bound"] <= ours["objective"]
    assert peer is not None and peer["c2"] == 0.1 and peer["wall_s"] > 0
    assert rec["budget_s"] == peer["wall_s"] and rec["met"] == (ours["wall_s"] <= peer["wall_s"])
    again = tmp_path / "again.md"
    assert large_c.main(["--render", str(js), "--out", str(again)]) == 0
    assert again.read_text() == page


@pytest.mark.data
def test_few_sentences_of_the_ner_case_with_the_n_slack_method(tmp_path, data_dir):
    from benchmarks import large_c

    out, js = tmp_path / "ns.md", tmp_path / "ns.json"
    argv = ["--case", "ner-ssvm", "--max-sentences", "25", "--C", "10", "--executor", "serial", "--method", "n-slack"]
    argv += ["--allocator", "glibc"]
    assert large_c.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    (rec,) = json.loads(js.read_text())
    ours = rec["ours"]
    assert rec["method"] == "n-slack" and ours["status"] == "converged"
    assert ours["gap"] <= max(0.1, 0.01 * ours["objective"]) + 1e-12  # max(eps, rtol F): eps 0.1 on F
    assert ours["n_cached_cuts"] == 0 and ours["lower_bound"] <= ours["objective"]
    assert "method n-slack, executor serial, cache_steps 0" in out.read_text()
