"""benchmarks/reproductions/cws_segmentation.py and pmtl_table8.py on a tiny slice of PKU.

Each script runs through its ``main`` in a temporary folder on the first sentences of the PKU
gold file with few iterations; the tables it writes are checked for internal consistency
(F1 = 2PR/(P+R), P and R from the word counts, the gold and in-vocabulary counts recomputed
from the seed's split, means and standard deviations from the per-seed rows, paired TP1 -> TP2
differences, normalised template weights), not against numbers copied from a run.
"""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.reproductions import cws_segmentation as cws
from benchmarks.reproductions import pmtl_table8 as pmtl

# A few iterations on purpose: the runs stop at max_iter, and the tables report it.
pytestmark = pytest.mark.filterwarnings("ignore::cutplane.exceptions.ConvergenceWarning")
N_SENT = 60


def _check_scores(row):
    p, r, f = row["precision"], row["recall"], row["f1"]
    assert f == (pytest.approx(2 * p * r / (p + r), rel=1e-12) if p + r > 0 else 0.0)
    if "n_pred" in row:
        assert p == pytest.approx(100.0 * row["n_correct"] / row["n_pred"], rel=1e-12)
        assert r == pytest.approx(100.0 * row["n_correct"] / row["n_gold"], rel=1e-12)
    assert 0.0 <= min(p, r, f) and max(p, r, f) <= 100.0
    assert row["gap"] >= -1e-9 * abs(row["objective"])
    assert row["lower_bound"] <= row["objective"] + 1e-9 * abs(row["objective"])
    assert row["relative_gap"] == pytest.approx(row["gap"] / abs(row["objective"]), rel=1e-12)
    assert 0 <= row["n_active_templates"] <= row["n_templates"]


@given(n=st.integers(1, 300), seed=st.integers(0, 2**31 - 1), frac=st.floats(0.05, 0.95))
@settings(max_examples=60)
def test_split_is_a_seeded_partition(n, seed, frac):
    sentences = [[f"w{i}"] for i in range(n)]
    a = cws.split_sentences(sentences, seed, frac)
    b = cws.split_sentences(sentences, seed, frac)
    assert np.array_equal(a.train_ids, b.train_ids) and np.array_equal(a.test_ids, b.test_ids)
    ids = np.concatenate([a.train_ids, a.test_ids])
    assert np.array_equal(np.sort(ids), np.arange(n))
    assert len(a.train_ids) == round(frac * n)
    assert a.train == [sentences[i] for i in a.train_ids] and a.test == [sentences[i] for i in a.test_ids]


def test_split_depends_on_the_seed():
    sentences = [[str(i)] for i in range(200)]
    assert not np.array_equal(cws.split_sentences(sentences, 0).train_ids, cws.split_sentences(sentences, 1).train_ids)


def test_weight_summary_by_hand():
    s = pmtl.weight_summary({"a": 3.0, "b": 1.0, "c": 0.0, "d": 1e-9}, top=2)
    total = 4.0 + 1e-9
    assert [n for n, _ in s["top"]] == ["a", "b"]
    assert [v for _, v in s["top"]] == pytest.approx([3.0 / total, 1.0 / total], rel=1e-15)
    assert s["n_above"] == 2  # d: 1e-9 / 3 is below 1e-5 of the largest
    assert s["max"] == pytest.approx(3.0 / total, rel=1e-15) and s["min"] == 0.0
    assert pmtl.weight_summary({"a": 0.0})["n_above"] == 0


def test_mean_std():
    m, s = cws.mean_std([1.0, 2.0, None, 4.0])
    assert m == pytest.approx(7 / 3) and s == pytest.approx(np.std([1, 2, 4], ddof=1))
    assert cws.mean_std([5.0]) == (5.0, 0.0) and cws.mean_std([None]) == (None, None)


@pytest.mark.data
def test_cws_table_is_consistent(data_dir, tmp_path):
    out = tmp_path / "cws.md"
    argv = [
        "--max-sentences",
        str(N_SENT),
        "--seeds",
        "0",
        "1",
        "--datasets",
        "pku",
        "--templates",
        "tp1",
        "tp2",
        "--methods",
        "mtl",
        "ssvm",
        "--C",
        "10",
        "--max-iter",
        "15",
        "--executor",
        "serial",
        "--out",
        str(out),
    ]
    assert cws.main(argv) == 0
    text = out.read_text(encoding="utf-8")
    assert "## PKU" in text and "python -m benchmarks.reproductions.cws_segmentation --max-sentences" in text
    assert "TP1 -> TP2, mtl C=10" in text
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    rows = data["rows"]
    assert len(rows) == 2 * 2 * 2
    gold = cws.load_corpus("pku", N_SENT)
    for row in rows:
        _check_scores(row)
        split = cws.split_sentences(gold, row["seed"])
        vocab = {w for s in split.train for w in s}
        assert row["n_train"] + row["n_test"] == N_SENT and row["n_test"] == len(split.test)
        assert row["n_gold"] == sum(map(len, split.test))
        assert row["n_gold_iv"] == sum(w in vocab for s in split.test for w in s)
        assert row["n_templates"] == {"tp1": 11, "tp2": 18}[row["templates"]]
        if row["method"] == "ssvm":
            assert set(row["template_weights"].values()) == {1.0}
    for s in data["summary"]:
        mine = [r for r in rows if (r["templates"], r["method"], r["C"]) == (s["templates"], s["method"], s["C"])]
        assert sorted(s["seeds"]) == [0, 1]
        for key in ("precision", "recall", "f1", "r_iv", "train_s", "iterations"):
            vals = [r[key] for r in mine]
            assert s[key] == pytest.approx(np.mean(vals), rel=1e-12)
            assert s[key + "_std"] == pytest.approx(np.std(vals, ddof=1), rel=1e-9, abs=1e-12)
            assert f"{s['f1']:.2f} ± {s['f1_std']:.2f}" in text
    again = tmp_path / "again.md"
    assert cws.main(["--render", str(out.with_suffix(".json")), "--out", str(again)]) == 0
    table = [line for line in text.splitlines() if line.startswith(("|", "- "))]
    assert table and table == [
        line for line in again.read_text(encoding="utf-8").splitlines() if line.startswith(("|", "- "))
    ]
    half = tmp_path / "half.md"
    assert (
        cws.main(
            [
                "--max-sentences",
                str(N_SENT),
                "--seeds",
                "0",
                "1",
                "--datasets",
                "pku",
                "--templates",
                "tp1",
                "--methods",
                "mtl",
                "--C",
                "10",
                "--max-iter",
                "15",
                "--executor",
                "serial",
                "--train-fraction",
                "0.5",
                "--out",
                str(half),
            ]
        )
        == 0
    )
    merged = tmp_path / "merged.md"
    assert (
        cws.main(["--render", str(out.with_suffix(".json")), str(half.with_suffix(".json")), "--out", str(merged)]) == 0
    )
    mdata = json.loads(merged.with_suffix(".json").read_text(encoding="utf-8"))
    assert len(mdata["rows"]) == len(rows) + 2
    assert {s["train_fraction"] for s in mdata["summary"]} == {0.5, 0.8}
    half_mtl = next(s for s in mdata["summary"] if s["train_fraction"] == 0.5)
    assert half_mtl["n_train"] == N_SENT // 2 and sorted(half_mtl["seeds"]) == [0, 1]
    mtext = merged.read_text(encoding="utf-8")
    assert "| 50% (30) |" in mtext and "--train-fraction 0.5" in mtext and "Learning curve, mtl TP1 C=10" in mtext
    for d in data["tp1_to_tp2"]:
        f1 = {(r["seed"], r["templates"]): r["f1"] for r in rows if (r["method"], r["C"]) == (d["method"], d["C"])}
        assert d["deltas"] == pytest.approx([f1[(s, "tp2")] - f1[(s, "tp1")] for s in (0, 1)])
        assert d["delta_f1"] == pytest.approx(np.mean(d["deltas"]))


@pytest.mark.data
def test_pmtl_table_is_consistent(data_dir, tmp_path):
    out = tmp_path / "pmtl.md"
    argv = [
        "--max-sentences",
        str(N_SENT),
        "--p-values",
        "1",
        "2",
        "--C",
        "10",
        "--max-iter",
        "15",
        "--executor",
        "serial",
        "--out",
        str(out),
    ]
    assert pmtl.main(argv) == 0
    text = out.read_text(encoding="utf-8")
    assert "python -m benchmarks.reproductions.pmtl_table8 --max-sentences" in text and "| PKU | TP2 | 0 | 2 |" in text
    rows = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))["rows"]
    assert [r["p"] for r in rows] == [1.0, 2.0]
    for row in rows:
        _check_scores(row)
        assert row["n_templates"] == 18
        mu = np.array(list(row["template_weights"].values()))
        nmu = mu / mu.sum()
        ws = row["weights_summary"]
        assert ws["n_above"] == int(np.sum(nmu > 1e-5 * nmu.max()))
        assert [v for _, v in ws["top"]] == pytest.approx(sorted(nmu, reverse=True)[:3])
        assert math.isclose(ws["max"], nmu.max()) and math.isclose(ws["min"], nmu.min())
        assert row["weights_summary"]["top"][0][0] in row["template_weights"]
    assert pmtl.paper_row("PKU", "tp2", 4 / 3)[2] == 93.8 and pmtl.paper_row("ESP", "ner134", 5.0) is None


@pytest.mark.data
def test_pmtl_spanish_selected_templates_merge_with_pku(data_dir, tmp_path):
    """``--tasks esp --ner-selected``: Spanish only, rows labelled by the set, Table 8's small column."""
    pku = tmp_path / "pku.md"
    assert (
        pmtl.main(
            [
                "--max-sentences",
                str(N_SENT),
                "--p-values",
                "1",
                "--C",
                "10",
                "--max-iter",
                "10",
                "--executor",
                "serial",
                "--out",
                str(pku),
            ]
        )
        == 0
    )
    esp = tmp_path / "esp.md"
    names = ["U003", "U002", "B"]
    assert (
        pmtl.main(
            [
                "--tasks",
                "esp",
                "--ner-selected",
                *names,
                "--ner-max-sentences",
                "150",
                "--ner-C",
                "100",
                "--ner-min-count",
                "1",
                "--p-values",
                "1",
                "2",
                "--max-iter",
                "25",
                "--executor",
                "serial",
                "--out",
                str(esp),
            ]
        )
        == 0
    )
    rows = json.loads(esp.with_suffix(".json").read_text(encoding="utf-8"))["rows"]
    assert [(r["task"], r["templates"], r["p"]) for r in rows] == [("ESP", "sel3", 1.0), ("ESP", "sel3", 2.0)]
    for row in rows:
        _check_scores(row)
        assert sorted(row["template_weights"]) == sorted(names) and row["n_train"] == 150 and row["min_count"] == 1
    assert pmtl.paper_row("ESP", "sel3", 1.0)[2] == 74.50 and pmtl.paper_row("ESP", "ner134", 1.0)[2] == 73.42
    text = esp.read_text(encoding="utf-8")
    assert "| ESP | SEL3 | - | 1 | 100 |" in text and "| 74.50 |" in text and "PKU: seeds []" in text
    assert "esp.train (150 sentences) -> esp.testb, SEL3" in text
    merged = tmp_path / "merged.md"
    assert (
        pmtl.main(["--render", str(pku.with_suffix(".json")), str(esp.with_suffix(".json")), "--out", str(merged)]) == 0
    )
    mtext = merged.read_text(encoding="utf-8")
    assert "| PKU | TP2 | 0 | 1 |" in mtext and "| ESP | SEL3 | - | 2 |" in mtext
    assert "PKU: seeds [0]" in mtext and "esp.train (150 sentences)" in mtext


@pytest.mark.data
def test_cws_render_merges_the_seeds_of_every_run(data_dir, tmp_path):
    runs = []
    for seeds in (["0"], ["1", "2"]):
        out = tmp_path / f"cws{''.join(seeds)}.md"
        assert (
            cws.main(
                [
                    "--max-sentences",
                    str(N_SENT),
                    "--seeds",
                    *seeds,
                    "--datasets",
                    "pku",
                    "--templates",
                    "tp1",
                    "--methods",
                    "mtl",
                    "--C",
                    "10",
                    "--max-iter",
                    "5",
                    "--executor",
                    "serial",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        runs.append(str(out.with_suffix(".json")))
    merged = tmp_path / "merged.md"
    assert cws.main(["--render", *runs, "--out", str(merged)]) == 0
    data = json.loads(merged.with_suffix(".json").read_text(encoding="utf-8"))
    assert data["meta"]["seeds"] == [0, 1, 2] and sorted(data["summary"][0]["seeds"]) == [0, 1, 2]
    assert "Seeds [0, 1, 2]" in merged.read_text(encoding="utf-8")
    assert all(len(v) == 3 for v in data["meta"]["oov"]["pku"].values())  # recomputed for the three seeds
    # seed 1 run again (more iterations): its row replaces the earlier one, and the page says so
    again = tmp_path / "again1.md"
    assert (
        cws.main(
            [
                "--max-sentences",
                str(N_SENT),
                "--seeds",
                "1",
                "--datasets",
                "pku",
                "--templates",
                "tp1",
                "--methods",
                "mtl",
                "--C",
                "10",
                "--max-iter",
                "9",
                "--executor",
                "serial",
                "--out",
                str(again),
            ]
        )
        == 0
    )
    redone = tmp_path / "redone.md"
    assert cws.main(["--render", *runs, str(again.with_suffix(".json")), "--out", str(redone)]) == 0
    rdata = json.loads(redone.with_suffix(".json").read_text(encoding="utf-8"))
    assert [(r["seed"], r["iterations"]) for r in rdata["rows"]] == [(0, 5), (1, 9), (2, 5)]
    assert (
        "1 rows of earlier runs replaced by a later run of the same fit (again1.json: pku mtl tp1 1"
        in redone.read_text(encoding="utf-8")
    )
