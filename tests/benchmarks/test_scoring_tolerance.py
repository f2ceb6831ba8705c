"""benchmarks/scoring_tolerance.py on a few CoNLL-2000 sentences: both arms, the page and its re-render."""

import json

import pytest

pytestmark = pytest.mark.data


def test_short_run_writes_both_arms(tmp_path, data_dir):
    from benchmarks import scoring_tolerance

    out, js = tmp_path / "st.md", tmp_path / "st.json"
    assert scoring_tolerance.main(["--max-sentences", "30", "--out", str(out), "--json", str(js)]) == 0
    arms = json.loads(js.read_text())["arms"]
    assert [a["arm"] for a in arms] == ["full", "scoring rtol"]
    full, loose = arms
    assert full["tolerance"] == full["eps"]  # every point to its eps
    for obj_tol, eps in zip(loose["tolerance"], loose["eps"]):
        assert obj_tol >= eps
    for a in arms:  # the refit is certified to the chosen point's eps in both arms
        assert a["refit_status"] == "converged" and a["refit_gap"] <= a["eps"][a["C"].index(a["chosen_C"])]
    page = out.read_text()
    assert page.startswith("# The scoring points of a path at a relative gap")
    again = tmp_path / "again.md"
    assert scoring_tolerance.main(["--render", str(js), "--out", str(again)]) == 0
    assert again.read_text() == page
