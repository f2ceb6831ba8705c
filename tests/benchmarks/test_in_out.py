"""benchmarks/in_out.py on a small generated corpus: both methods certify and bracket each other."""

import json

from benchmarks import in_out


def test_generated_sentences(tmp_path):
    from problems.demo_data import make_demo_tagging
    from problems.io.conll import write_columns

    task = make_demo_tagging(n_train=60, n_test=20)
    paths = []
    for name, X, Y in (("train", task.X_train, task.y_train), ("test", task.X_test, task.y_test)):
        rows = [[(row[0], row[1], lab) for row, lab in zip(x, ys)] for x, ys in zip(X, Y)]
        paths.append(tmp_path / f"{name}.txt")
        write_columns(paths[-1], rows)
    out, js = tmp_path / "page.md", tmp_path / "page.json"
    argv = ["--n-sentences", "60", "--data", str(paths[0]), "--test", str(paths[1]), "--Cs", "1", "100"]
    assert in_out.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    records = json.loads(js.read_text())["records"]
    runs = [(1.0, "bmrm"), (1.0, "in-out"), (100.0, "bmrm"), (100.0, "in-out")]
    assert [(r["C"], r["method"]) for r in records] == runs
    for r in records:
        assert r["status"] == "converged" and r["gap"] <= r["eps"] and r["lower_bound"] <= r["objective"]
    assert in_out.bracket(records[0], records[1]) and in_out.bracket(records[2], records[3])
    page = out.read_text()
    assert page.startswith("# BMRM against the in-out rule") and "DO NOT" not in page
