"""The demo's data and report: certified numbers, noise templates dropped by MTL^struct, files."""

import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems.cli.demo import demo_report, format_demo_table
from problems.demo_data import DEMO_TAGGING, make_demo_tagging, write_tagging_files
from tests.png import png_size


@pytest.fixture(scope="module")
def small_report():
    task = make_demo_tagging(3, n_train=150, n_test=80, n_noise=4)
    return task, demo_report(seed=3, C=10.0, eps=0.05, epochs=8, task=task)


def test_demo_task_is_seeded_and_validated():
    a, b, c = (
        make_demo_tagging(1, n_train=20, n_test=5),
        make_demo_tagging(1, n_train=20, n_test=5),
        make_demo_tagging(2, n_train=20, n_test=5),
    )
    assert a.X_train == b.X_train and a.y_test == b.y_test
    assert a.X_train != c.X_train
    full = make_demo_tagging(0)
    assert len(full.X_train) == DEMO_TAGGING["n_train"] and len(full.noise) == DEMO_TAGGING["n_noise"]
    with pytest.raises(InputError, match="unknown setting"):
        make_demo_tagging(0, n_sentences=10)


def test_tagging_files_round_trip(tmp_path):
    from problems.io.conll import read_conll
    from problems.sequence.templates import parse_templates

    task = make_demo_tagging(0, n_train=12, n_test=4)
    files = write_tagging_files(task, tmp_path / "d")
    train, test = read_conll(files["train"]), read_conll(files["test"])
    assert [list(map(tuple, s)) for s in train.inputs] == [list(map(tuple, s)) for s in task.X_train]
    assert [list(s) for s in train.labels] == task.y_train and [list(s) for s in test.labels] == task.y_test
    names = [t.name for t in parse_templates(files["templates"].read_text())]
    assert set(task.noise) | set(task.informative) <= set(names)


def test_report_certificates_and_template_selection(small_report):
    task, rep = small_report
    mtl, spom, ssvm = (rep["methods"][k] for k in ("mtl", "spom", "ssvm"))
    for m in (mtl, ssvm):
        assert m["status"] == "converged"
        assert m["lower_bound"] <= m["objective"] and m["gap"] == pytest.approx(m["objective"] - m["lower_bound"])
        assert 0 <= m["gap"] <= rep["eps"]
        lower = np.asarray(m["curve"]["lower_bound"])
        best = np.asarray(m["curve"]["objective"])
        assert np.all(np.diff(lower[np.isfinite(lower)]) >= -1e-9) and np.all(np.diff(best) <= 1e-9)
        assert np.all(lower <= best + 1e-9)
    # SPOM minimises the same F as MTL^struct: MTL's certified lower bound is below SPOM's objective
    assert spom["objective"] >= mtl["lower_bound"] - 1e-9
    assert spom["gap_to_mtl_lower_bound"] == pytest.approx(spom["objective"] - mtl["lower_bound"])
    # the noise columns carry no information: MTL^struct zeroes their templates, the SSVM does not
    assert sorted(mtl["noise_dropped"]) == sorted(task.noise)
    assert mtl["noise_share"] == 0.0
    assert ssvm["noise_dropped"] == [] and ssvm["noise_share"] > 0
    assert set(t for t in task.informative if t.startswith("U0")) <= set(mtl["active_templates"])
    for m in (mtl, spom, ssvm):  # noise_share recomputed from the norms
        norms = m["template_norms"]
        assert m["noise_share"] == pytest.approx(sum(norms[t] for t in task.noise) / sum(norms.values()))
        assert m["test_accuracy"] > 80.0  # percent, as every score of the CLI


def test_table_lists_the_report(small_report):
    _, rep = small_report
    lines = format_demo_table(rep).splitlines()
    cols = lines[0].split()
    assert cols[0] == "method" and len(lines) == 4
    rows = {r.split()[0]: r.split() for r in lines[1:]}
    assert set(rows) == {"MTL^struct", "SPOM", "SSVM"} and all(len(r) == len(cols) for r in rows.values())
    for m in rep["methods"].values():
        row = rows[m["name"]]
        assert float(row[cols.index("objective")]) == pytest.approx(m["objective"], abs=1e-4)
        assert row[cols.index("noise_dropped")] == f"{len(m['noise_dropped'])}/{len(rep['noise_templates'])}"
        assert row[cols.index("active")] == f"{len(m['active_templates'])}/{m['n_templates']}"
    assert rows["SPOM"][cols.index("lower_bound")] == "-" and rows["SPOM"][cols.index("gap")].endswith("*")


def test_plots_written(small_report, tmp_path):
    pytest.importorskip("matplotlib")
    from problems.cli.demo import plot_demo

    files = plot_demo(small_report[1], tmp_path)
    assert [f.name for f in files] == ["bounds.png", "template_weights.png"]
    for f in files:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        png_size(f)  # chunks, CRCs and pixel rows


def test_template_kinds_and_what_mtl_kept(small_report):
    """The kinds the demo's text and plot title speak of, and the kept / zeroed lists they print,
    come from the task and the fitted models."""
    from problems.cli.demo import describe_zeroed, kept_and_zeroed, template_kinds

    task, rep = small_report
    kinds = template_kinds(task)
    assert rep["template_kinds"] == kinds
    assert [t for t, k in kinds.items() if k == "informative"] == ["U00", "U01", "U02"]
    assert [t for t, k in kinds.items() if k == "previous token"] == ["U10", "U11", "U12"]
    assert [t for t, k in kinds.items() if k == "noise"] == list(task.noise) and kinds["B"] == "transitions"
    mtl = rep["methods"]["mtl"]
    kept, zeroed = kept_and_zeroed(mtl, kinds)
    assert kept == [t for t in mtl["template_norms"] if t in mtl["active_templates"]]
    assert sorted(kept + [t for names in zeroed.values() for t in names]) == sorted(kinds)
    assert zeroed["noise"] == list(task.noise)
    assert all(kinds[t] == kind for kind, names in zeroed.items() for t in names)
    text = describe_zeroed(zeroed, kinds)
    assert text.startswith(f"all {len(task.noise)} noise templates ({', '.join(task.noise)})")
    assert describe_zeroed({"noise": ["U03"]}, kinds).startswith(f"1 of {len(task.noise)} noise templates (U03)")
    assert describe_zeroed({}, kinds) == "none"
    ssvm_kept, ssvm_zeroed = kept_and_zeroed(rep["methods"]["ssvm"], kinds)
    assert ssvm_zeroed == {} and len(ssvm_kept) == len(kinds)
