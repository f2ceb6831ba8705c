"""benchmarks/warm_refit.py on a small generated corpus: the warm and the cold refit agree."""

import json

from benchmarks import warm_refit


def test_generated_sentences(tmp_path):
    from problems.demo_data import make_demo_tagging
    from problems.io.conll import write_columns

    task = make_demo_tagging(n_train=60, n_test=1)
    path = tmp_path / "train.txt"
    rows = [[(row[0], row[1], lab) for row, lab in zip(x, ys)] for x, ys in zip(task.X_train, task.y_train)]
    write_columns(path, rows)
    out, js = tmp_path / "page.md", tmp_path / "page.json"
    argv = ["--n-sentences", "60", "--data", str(path), "--Cs", "1", "10", "--out", str(out), "--json", str(js)]
    assert warm_refit.main(argv) == 0
    warm, cold = json.loads(js.read_text())["records"]
    assert warm["refit_warm"] and not cold["refit_warm"]
    assert warm["status"] == cold["status"] == "converged" and warm["C"] == cold["C"]
    assert warm_refit.agree(warm, cold)
    page = out.read_text()
    assert page.startswith("# The CV estimators' warm refit") and "the two certified refits agree" in page
