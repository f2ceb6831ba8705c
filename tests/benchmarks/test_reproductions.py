"""The paper reproductions of ``benchmarks/reproductions`` (the research log, not the product):
their pages and checks on tiny runs. Each is imported (inside its test) as a module of the
``benchmarks.reproductions`` package and run through its ``main``; the command line is
``python -m benchmarks.reproductions.<name>``.
"""

import pytest

PNG = b"\x89PNG\r\n\x1a\n"
CHUNKING = "python -m benchmarks.reproductions.conll2000_chunking"


def _summary_run(path, command, rows):
    import json

    meta = {"command": command}
    path.write_text(json.dumps({"meta": meta, "rows": rows}))


def _summary_row(method, C, f1, norms, status="converged"):
    return {
        "method": method,
        "C": C,
        "test_f1": f1,
        "train_f1": 99.0,
        "status": status,
        "gap": 1.0,
        "relative_gap": 0.01,
        "iterations": 10,
        "train_s": 1.0,
        "n_active_templates": len(norms),
        "n_templates": len(norms),
        "template_norms": norms,
    }


def test_conll2000_summary_reads_the_runs_and_checks_the_target(tmp_path):
    from benchmarks.reproductions import conll2000_summary as mod

    memorising = {"U05": 3.0, "U06": 3.0, "U02": 4.0}
    spread = {"U05": 1.0, "U06": 1.0, "U02": 8.0}
    _summary_run(
        tmp_path / "conll2000_chunking.json",
        f"{CHUNKING} --C 10",
        [
            _summary_row("mtl", 1e4, 93.4, memorising),
            _summary_row("ssvm", 1e3, 93.9, spread),
            _summary_row("mtl", 1e5, 99.0, spread, status="max_iter"),
        ],
    )  # uncertified: not counted
    _summary_run(
        tmp_path / "conll2000_chunking_f2.json", f"{CHUNKING} --min-count 2", [_summary_row("mtl", 1e4, 93.7, spread)]
    )
    out = tmp_path / "summary.md"
    assert mod.main(["--results", str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text()
    assert "Best converged MTL^struct row: 93.70 (reached)" in text and "cutoff 2" in text
    assert "puts 60% of sum_j ||w_j||" in text and "falls to 20%" in text and "99.00" in text
    # below the target the verdict says so
    _summary_run(
        tmp_path / "conll2000_chunking_f2.json", f"{CHUNKING} --min-count 2", [_summary_row("mtl", 1e4, 93.45, spread)]
    )
    mod.main(["--results", str(tmp_path), "--out", str(out)])
    assert "93.45 (not reached)" in out.read_text()
    assert mod.main(["--results", str(tmp_path / "nothing"), "--out", str(out)]) == 1


@pytest.mark.data
def test_ocr_spom_fig2_small_run(data_dir, tmp_path):
    """The Fig. 2 script end to end on a few OCR words: page, plot, and its built-in check
    (the package's SPOM against Alg. 3 written with dense vectors) agreeing to rounding."""
    import re

    from benchmarks.reproductions import ocr_spom_fig2 as mod

    out = tmp_path / "fig2.md"
    mod.main(
        [
            "--n-train-words",
            "30",
            "--n-components",
            "20",
            "--passes",
            "3",
            "--eta-grid",
            "1",
            "3",
            "--tune-epochs",
            "1",
            "--mtl-time-limit",
            "20",
            "--check-rounds",
            "30",
            "--out",
            str(out),
        ]
    )
    text = out.read_text()
    assert "30 words" in text and "SPOM (Alg. 3, last model)" in text and "Gauss-Seidel" in text
    assert out.with_suffix(".png").read_bytes()[:8] == PNG
    diff = float(re.search(r"max \|w_package - w_dense\| = ([0-9.e+-]+)", text).group(1))
    assert diff < 1e-9


@pytest.mark.data
def test_danish_parsing_page_compares_mtl_and_ssvm_along_C(data_dir, tmp_path):
    """The Table 7 script on its data (few iterations): the page names its command, and its
    MTL^parse - SSVM lines are the differences of the table's own rows at each C."""
    import re

    from benchmarks.reproductions import danish_parsing as mod

    out = tmp_path / "dk.md"
    argv = ["--C", "1", "100", "--regularizers", "mtl", "ssvm", "--max-iter", "15", "--out", str(out)]
    mod.main(argv)
    text = out.read_text()
    assert f"Produced by `python -m benchmarks.reproductions.danish_parsing {' '.join(argv)}`" in text
    table = {}
    main_table = text.split("UAS: attachment score", 1)[0]
    for m in re.finditer(
        r"^\| (MTL\^parse|SSVM) \| ([0-9.e+]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|", main_table, re.M
    ):
        table[m.group(1), float(m.group(2))] = [float(m.group(k)) for k in (3, 4, 5)]
    assert len(table) == 4
    versus = text.split("## MTL^parse against the structural SVM", 1)[1]
    for C in (1.0, 100.0):
        m, s = table["MTL^parse", C], table["SSVM", C]
        row = re.search(rf"^\| {C:g} \| ([+-][0-9.]+) \| ([+-][0-9.]+) \| ([+-][0-9.]+) \|", versus, re.M)
        for k in range(3):
            assert float(row.group(k + 1)) == pytest.approx(m[k] - s[k], abs=0.011)
    best = max(((n, C) for n, C in table if n == "SSVM"), key=lambda k: table[k][0])
    assert f"SSVM {table[best][0]:.2f} at C = {best[1]:g}" in versus
