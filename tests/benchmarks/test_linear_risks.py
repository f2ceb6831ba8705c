"""benchmarks/linear_risks.py --quick: every section runs, the page is written and re-rendered."""

import json


def test_quick_run_writes_the_page(tmp_path):
    from benchmarks import linear_risks

    out, js = tmp_path / "lr.md", tmp_path / "lr.json"
    assert linear_risks.main(["--quick", "--out", str(out), "--json", str(js)]) == 0
    page = out.read_text()
    assert page.startswith("# Linear risks")
    assert "Command: `python -m benchmarks.linear_risks --quick`" in page
    rec = json.loads(js.read_text())
    # the counting oracle's cut equals the all-pairs one wherever both ran
    assert all(r["all_pairs_agree"] for r in rec["oracles"] if "all_pairs_s" in r)
    # each reference's exact objective is inside (or above) our certified bracket
    q = rec["regression"]["quantile"]
    assert q["ours_lower"] - 1e-9 <= q["highs_objective"]
    assert rec["rank"]["ranksvm_lower_bound"] <= rec["rank"]["liblinear"]["objective"] + 1e-9
    again = tmp_path / "again.md"
    assert linear_risks.main(["--render", str(js), "--out", str(again)]) == 0
    assert again.read_text() == page
