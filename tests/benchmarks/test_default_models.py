"""benchmarks/default_models.py on tiny generated files (the --train/--dev/--test override of one task)."""

import json

import pytest

from benchmarks import default_models


def _write_bio_tagging(folder):
    """A small generated tagging task with its labels renamed to chunk tags (so chunk F1 applies)."""
    from problems.demo_data import make_demo_tagging
    from problems.io.conll import write_columns

    task = make_demo_tagging(n_train=50, n_test=30)
    labels = sorted({lab for ys in task.y_train + task.y_test for lab in ys})
    rename = dict(zip(labels, ["O", "B-NP", "I-NP", "B-VP", "I-VP"]))
    X, y = task.X_test, task.y_test
    splits = {"train": (task.X_train, task.y_train), "dev": (X[:15], y[:15]), "test": (X[15:], y[15:])}
    out = {}
    for name, (X, y) in splits.items():
        out[name] = folder / f"{name}.txt"
        write_columns(out[name], [[(*row, rename[lab]) for row, lab in zip(x, ys)] for x, ys in zip(X, y)])
    return out


def _check_page_figures(page, rec):
    """Every figure of the record appears in the page as rendered from the JSON."""
    assert f"| {rec['score']:.2f} |" in page
    report = rec["plain"]["report"]
    assert f"| chosen C | {report['C']:g} (grid " in page
    path = report["path"]
    assert report["score_unit"] == "percent"  # the CLI's validation scores are in percent
    for i, C in enumerate(path["C"]):
        row = f"| {C:g}{' (chosen)' if C == report['C'] else ''} | {path['validation_score'][i]:.2f} |"
        assert row in page
        assert f"| {path['status'][i]} | {path['n_iter'][i]} |" in page
    assert default_models._s(rec["plain"]["train"]["wall_s"]) in page


def test_tagging_task_with_dev_and_crfsuite(tmp_path):
    files = _write_bio_tagging(tmp_path)
    out, js = tmp_path / "page.md", tmp_path / "page.json"
    argv = [
        "--tasks",
        "conll2002",
        "--train",
        str(files["train"]),
        "--dev",
        str(files["dev"]),
        "--templates",
        "chunking",
    ]
    argv += ["--test", str(files["test"]), "--time-limit", "60", "--out", str(out), "--json", str(js)]
    assert default_models.main(argv) == 0
    data = json.loads(js.read_text())
    assert set(data) == {"meta", "tasks"}
    assert {"command", "date", "machine", "version"} <= set(data["meta"])
    (rec,) = data["tasks"]
    assert rec["task"] == "conll2002" and rec["templates"] == "chunking" and rec["metric"] == "f1"
    plain = rec["plain"]
    assert "error" not in plain
    assert "--C" not in plain["train_command"] and "--dev" in plain["train_command"]
    assert "--time-limit 60" in plain["train_command"]
    for key in ("wall_s", "cpu_s", "max_rss_mb", "returncode"):
        assert key in plain["train"]
    assert plain["train"]["wall_s"] > 0 and plain["train"]["cpu_s"] > 0 and plain["train"]["max_rss_mb"] > 0
    report = plain["report"]
    # the MTL grid, then the points the path added past its edge when the best score was there
    assert report["C_grid"][:3] == [100.0, 1000.0, 10000.0] and report["C"] in report["C_grid"]
    assert report["path"]["extension"] == [False] * 3 + [True] * (len(report["C_grid"]) - 3)
    assert report["extended"] == (
        None if len(report["C_grid"]) == 3 else "above" if report["C_grid"][3] > 1e4 else "below"
    )
    assert report["validation"]["source"] == "data"  # the --dev file, not a held-out fraction
    assert set(report["path"]["C"]) == set(report["C_grid"])
    assert rec["score"] == pytest.approx(plain["test"]["f1"])
    crf = rec["crfsuite"]
    assert "error" not in crf and crf["c2"] == 1.0 and 0.0 <= crf["f1"] <= 100.0
    assert rec["time_ratio"] == pytest.approx(plain["train"]["wall_s"] / (crf["prepare_seconds"] + crf["seconds"]))
    assert rec["acceptance"]["rule"] == "test F1 >= 73.4"
    assert rec["rss_ratio"] == pytest.approx(plain["train"]["max_rss_mb"] / crf["process"]["max_rss_mb"])
    lean = dict((rule, met) for rule, met in rec["lean"]["lines"])  # issue 38's lines, each from the run
    assert lean == {
        "wall <= 1x CRFsuite's": rec["time_ratio"] <= 1.0,
        "peak RSS <= 1.5x CRFsuite's": rec["rss_ratio"] <= 1.5,
        "test F1 >= 73.4": rec["score"] >= 73.4,
        "the chosen point certified (converged)": report["status"] == "converged",
    }
    assert rec["lean"]["met"] == all(lean.values())

    page = out.read_text()
    assert page.startswith("# Good models out of the box")
    assert "Command: `python -m benchmarks.default_models --tasks conll2002 --train" in page
    assert "## conll2002:" in page
    _check_page_figures(page, rec)
    assert f"| {crf['f1']:.2f} |" in page and f"| time ratio (ours / CRFsuite) | {rec['time_ratio']:.1f} |" in page
    assert f"| conll2002 | {rec['time_ratio']:.2f} | {rec['rss_ratio']:.2f} | wall <= 1x CRFsuite's: " in page

    again = tmp_path / "again.md"
    assert default_models.main(["--render", str(js), "--out", str(again)]) == 0
    assert again.read_text() == page


def test_parse_task_with_single_C_runs(tmp_path):
    from problems.io.conllu import write_conllu
    from tests.problems.test_dependency_parser import make_treebank

    write_conllu(tmp_path / "train.conllu", make_treebank(20, seed=0))
    write_conllu(tmp_path / "test.conllu", make_treebank(20, seed=1))
    out, js = tmp_path / "page.md", tmp_path / "page.json"
    argv = ["--tasks", "danish", "--train", str(tmp_path / "train.conllu"), "--test", str(tmp_path / "test.conllu")]
    assert default_models.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    (rec,) = json.loads(js.read_text())["tasks"]
    assert rec["kind"] == "parse" and "crfsuite" not in rec
    path = rec["plain"]["report"]["path"]
    assert rec["plain"]["test"]["score_unit"] == "percent"  # the CLI's UAS is in percent
    assert rec["score"] == pytest.approx(rec["plain"]["test"]["uas"])
    singles = rec["singles"]
    assert [s["C"] for s in singles] == path["C"] and [s["eps"] for s in singles] == path["eps"]
    for s, eps in zip(singles, path["eps"]):
        assert f"--C {s['C']:g} --eps {eps:g}" in s["train_command"]
        assert s["report"]["C"] == s["C"]
    best = max(singles, key=lambda s: s["score"])
    assert rec["best_single"] == {"C": best["C"], "score": best["score"]}
    acc = rec["acceptance"]
    assert acc["delta"] == pytest.approx(rec["score"] - best["score"])
    assert acc["met"] == (acc["delta"] >= -0.5)
    page = out.read_text()
    _check_page_figures(page, rec)
    assert "not a tagging task" in page
    for s in singles:
        assert f"| {s['C']:g} | {s['eps']:.3g} | {s['score']:.2f} | {s['report']['status']} |" in page
    assert f"(difference {acc['delta']:+.2f})" in page
    lean = dict(rec["lean"]["lines"])
    assert lean["wall <= 133 s"] == (rec["plain"]["train"]["wall_s"] <= 133.0)
    assert lean[acc["rule"]] == acc["met"]


def test_failed_child_is_recorded(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("a b\n\n")  # too few columns for the chunking templates' second column
    out, js = tmp_path / "page.md", tmp_path / "page.json"
    argv = ["--tasks", "conll2000", "--train", str(bad), "--test", str(bad), "--no-crfsuite"]
    assert default_models.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    (rec,) = json.loads(js.read_text())["tasks"]
    assert "error" in rec["plain"] and rec["plain"]["train"]["returncode"] != 0
    assert rec["acceptance"]["met"] is False
    assert "**Failed**" in out.read_text()


def test_bad_arguments_refused():
    with pytest.raises(SystemExit):
        default_models.main(["--tasks", "conll2000", "danish", "--train", "x.txt", "--no-write"])
    with pytest.raises(SystemExit):
        default_models.main(["--tasks", "danish", "--time-limit", "0", "--no-write"])


def test_records_written_before_the_cli_reported_percent_render_as_they_did(tmp_path):
    """The page of 2026-11-26 re-renders byte for byte from its JSON, whose UAS and validation
    scores are fractions (written before the CLI reported percent and said so with
    ``score_unit``); both kept as test data since the page was written again."""
    from pathlib import Path

    data_dir = Path(__file__).resolve().parent / "data"
    old = data_dir / "default_models_2026-11-26.json"
    data = json.loads(old.read_text())
    assert all("score_unit" not in (rec.get("plain", {}).get("test") or {}) for rec in data["tasks"])
    out = tmp_path / "page.md"
    assert default_models.main(["--render", str(old), "--out", str(out)]) == 0
    assert out.read_text() == (data_dir / "default_models_2026-11-26.md").read_text()


@pytest.mark.parametrize("name", ["default_models", "default_models_conll2000"])
def test_the_committed_page_renders_from_its_json(tmp_path, name):
    """docs/results/default_models.md (all three tasks) and default_models_conll2000.md (a later
    run of CoNLL-2000 alone) are what the script renders from their committed JSON."""
    from pathlib import Path

    results = Path(default_models.__file__).resolve().parents[1] / "docs" / "results"
    out = tmp_path / "page.md"
    assert default_models.main(["--render", str(results / f"{name}.json"), "--out", str(out)]) == 0
    assert out.read_text() == (results / f"{name}.md").read_text()
