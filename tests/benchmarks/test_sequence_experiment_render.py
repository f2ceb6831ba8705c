"""``--render`` of the sequence drivers: one page from several runs' JSON, the C chosen on dev.

Two tiny CoNLL-2002 runs (a few sentences, a few iterations) at different C and methods are
merged; the merged rows, the header naming both commands and the dev choice are checked against
the runs' own JSON, and runs on different data are refused with the package's InputError.
"""

import json

import pytest

from benchmarks.reproductions import conll2002_ner as ner
from cutplane.exceptions import InputError

pytestmark = [pytest.mark.filterwarnings("ignore::cutplane.exceptions.ConvergenceWarning"), pytest.mark.data]


COMMON = ["--max-sentences", "60", "--max-iter", "6", "--executor", "serial", "--epochs", "1"]


def _run(tmp_path, name, *extra):
    out = tmp_path / f"{name}.md"
    assert ner.main([*COMMON, *extra, "--out", str(out)]) == 0
    return out.with_suffix(".json")


def test_render_merges_runs_and_chooses_C_on_dev(data_dir, tmp_path):
    a = _run(tmp_path, "a", "--C", "1", "--methods", "mtl")
    b = _run(tmp_path, "b", "--C", "100", "--methods", "mtl", "ssvm")
    merged = tmp_path / "merged.md"
    assert ner.main(["--render", str(a), str(b), "--out", str(merged)]) == 0
    rows_a = json.loads(a.read_text())["rows"]
    rows_b = json.loads(b.read_text())["rows"]
    data = json.loads(merged.with_suffix(".json").read_text())
    assert data["rows"] == rows_a + rows_b
    text = merged.read_text()
    assert "--C 1 --methods mtl" in text
    assert "with the rows of `python -m benchmarks.reproductions.conll2002_ner" in text
    assert "--C 100 --methods mtl ssvm" in text and "page rendered from the runs' JSON" in text
    for r in rows_a + rows_b:
        assert f"| {r['method']} | {r['C']:g} | {r['test_f1']:.2f} |" in text
    mtl = [r for r in rows_a + rows_b if r["method"] == "mtl"]
    best = max(mtl, key=lambda r: r["dev_f1"])
    choice = (
        f"- mtl: C = {best['C']:g} by dev F1 ({best['dev_f1']:.2f}, among C = 1, 100): test F1 {best['test_f1']:.2f}"
    )
    assert choice in text
    assert "- ssvm: C =" not in text  # one C only: no choice to report
    spom = _run(tmp_path, "s", "--C", "100", "--methods", "spom")
    with_target = tmp_path / "target.md"
    assert ner.main(["--render", str(a), str(b), str(spom), "--target-f1", "50", "--out", str(with_target)]) == 0
    text = with_target.read_text()
    s = json.loads(spom.read_text())["rows"][0]
    m = next(r for r in rows_b if r["method"] == "mtl")
    assert (
        f"- spom(mtl) C=100: objective {s['objective']:.6g} after {s['iterations']} epochs, "
        f"{(s['objective'] - m['lower_bound']) / abs(m['lower_bound']):.1%} above MTL^struct's certified lower "
        f"bound {m['lower_bound']:.6g}"
    ) in text
    best = max(mtl, key=lambda r: r["test_f1"])
    assert "mtl test F1 >= 50: " in text and f"best mtl row C={best['C']:g}: F1 {best['test_f1']:.2f}" in text
    # the same fit (ssvm, C = 100) run again: its later row replaces the earlier one, in place
    again = _run(tmp_path, "again", "--C", "100", "--methods", "ssvm", "--max-iter", "3")
    replaced = tmp_path / "replaced.md"
    assert ner.main(["--render", str(a), str(b), str(again), "--out", str(replaced)]) == 0
    new_row = json.loads(again.read_text())["rows"][0]
    assert new_row["iterations"] != next(r for r in rows_b if r["method"] == "ssvm")["iterations"]
    expected = rows_a + [new_row if r["method"] == "ssvm" else r for r in rows_b]
    assert json.loads(replaced.with_suffix(".json").read_text())["rows"] == expected
    assert (
        "1 rows of earlier runs replaced by a later run of the same fit (again.json: ssvm 100.0)"
        in replaced.read_text()
    )


def test_render_refuses_runs_on_other_data(data_dir, tmp_path):
    a = _run(tmp_path, "a", "--C", "1", "--methods", "mtl")
    out = tmp_path / "c.md"
    assert (
        ner.main(
            [
                "--max-sentences",
                "50",
                "--max-iter",
                "3",
                "--executor",
                "serial",
                "--C",
                "1",
                "--methods",
                "mtl",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    with pytest.raises(InputError, match="n_train"):
        ner.main(["--render", str(a), str(out.with_suffix(".json")), "--out", str(tmp_path / "m.md")])
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="not a run's JSON"):
        ner.main(["--render", str(bad), "--out", str(tmp_path / "m.md")])
