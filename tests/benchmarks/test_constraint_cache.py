"""benchmarks/constraint_cache.py on a tiny generated tagging task: the page, its checks, the re-render."""

import json


def test_tiny_synthetic_run_writes_page(tmp_path):
    from benchmarks import constraint_cache

    out, js = tmp_path / "cc.md", tmp_path / "cc.json"
    argv = ["--data", "synthetic", "--max-sentences", "40", "--C", "10", "100", "--cache-steps", "0", "3"]
    assert constraint_cache.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    page = out.read_text()
    assert page.startswith("# The constraint cache against plain BMRM")
    assert "Command: `python -m benchmarks.constraint_cache --data synthetic" in page
    assert "## ssvm" in page and "## mtl" in page and "NO" not in page
    rows = json.loads(js.read_text())["rows"]
    assert len(rows) == 2 * 2 * 2
    assert all(r["status"] == "converged" for r in rows)
    assert all(r["n_cached_cuts"] == 0 for r in rows if r["cache_steps"] == 0)
    assert any(r["n_cached_cuts"] > 0 for r in rows)
    assert all(r["lower_F"] <= r["objective_F"] for r in rows)
    again = tmp_path / "again.md"
    assert constraint_cache.main(["--render", str(js), "--out", str(again)]) == 0
    assert again.read_text() == page
