"""benchmarks/cold_start.py on a tiny generated task: a cold and a warm process, the page, the re-render."""

import json


def test_tiny_synthetic_cold_and_warm_runs(tmp_path):
    from benchmarks import cold_start

    out, js = tmp_path / "cold.md", tmp_path / "cold.json"
    argv = ["--data", "synthetic", "--sentences", "20", "--repeats", "1"]
    assert cold_start.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    page = out.read_text()
    assert page.startswith("# Cold start: the first fit of a small tagger")
    assert "Command: `python -m benchmarks.cold_start --data synthetic" in page
    (rec,) = json.loads(js.read_text())
    (rep,) = rec["repeats"]
    cold, warm = rep["cold"], rep["warm"]
    # the copy had no numba cache: the first process compiled kernels, the second loaded them all
    assert cold["n_compiled"] > 0 and cold["compile_s"] > 0
    assert warm["n_compiled"] == 0 and warm["compile_s"] == 0
    assert cold["engine_s"] <= cold["fit_s"] and warm["engine_s"] <= warm["fit_s"]
    assert rep["cold_start_s"] == (cold["fit_s"] - warm["fit_s"]) + (cold["predict_s"] - warm["predict_s"])
    again = tmp_path / "again.md"
    assert cold_start.main(["--render", str(js), "--out", str(again)]) == 0
    assert again.read_text() == page
