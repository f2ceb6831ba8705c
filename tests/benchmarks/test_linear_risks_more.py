"""benchmarks/linear_risks_more.py --quick: every section runs, the page is written and re-rendered."""

import json


def test_quick_run_writes_the_page(tmp_path):
    from benchmarks import linear_risks_more

    out, js = tmp_path / "lr2.md", tmp_path / "lr2.json"
    assert linear_risks_more.main(["--quick", "--out", str(out), "--json", str(js)]) == 0
    page = out.read_text()
    assert page.startswith("# Linear risks, second batch")
    assert "Command: `python -m benchmarks.linear_risks_more --quick`" in page
    rec = json.loads(js.read_text())
    # LS-BMRM and BMRM certify the same optimum on every piecewise-linear risk
    assert all(r["overlap"] for r in rec["line_search"]["rows"])
    assert all(r["ls-bmrm"]["searches"] > 0 for r in rec["line_search"]["rows"])
    # the references' exact objectives never beat our certified lower bounds
    for loss in ("logistic", "squared_hinge"):
        row = rec["smooth"][loss]
        assert row["reference"]["objective"] >= max(row["bmrm"]["lower"], row["ls-bmrm"]["lower"]) - 1e-9
    nv = rec["novelty"]
    assert nv["libsvm"]["objective"] >= max(nv["bmrm"]["lower"], nv["ls-bmrm"]["lower"]) - 1e-9
    again = tmp_path / "again.md"
    assert linear_risks_more.main(["--render", str(js), "--out", str(again)]) == 0
    assert again.read_text() == page
