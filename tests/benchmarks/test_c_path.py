"""benchmarks/c_path.py on a tiny generated tagging task: the page, its checks and the re-render."""

import json


def test_tiny_synthetic_run_writes_page(tmp_path):
    from benchmarks import c_path

    out, js = tmp_path / "c_path.md", tmp_path / "c_path.json"
    argv = ["--data", "synthetic", "--max-sentences", "30", "--C", "10", "1", "--max-iter", "400"]
    assert c_path.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    page = out.read_text()
    assert page.startswith("# A certified path over C")
    assert "Command: `python -m benchmarks.c_path --data synthetic" in page
    assert "## ssvm" in page and "## mtl" in page
    rows = json.loads(js.read_text())["rows"]
    points = [r for r in rows if r["arm"].startswith("path-") and r["C"] is not None]
    assert len(points) == 2 * 2 * 2  # regularisers x orders x C
    assert all(r["agrees"] and r["lower_valid"] for r in points)
    ranks = {(r["regularizer"], r["arm"], r["C"]): r["rank"] for r in points}
    assert ranks[("ssvm", "path-decreasing", 1.0)] == 0 and ranks[("ssvm", "path-increasing", 10.0)] == 0
    assert "| path-decreasing |" in page and "NO" not in page
    again = tmp_path / "again.md"
    assert c_path.main(["--render", str(js), "--out", str(again)]) == 0
    assert again.read_text() == page


def test_bad_grid_refused():
    import pytest

    from benchmarks import c_path

    with pytest.raises(SystemExit):
        c_path.main(["--data", "synthetic", "--C", "10", "10", "--no-write"])
    with pytest.raises(SystemExit):
        c_path.main(["--data", "synthetic", "--C", "0", "--no-write"])
