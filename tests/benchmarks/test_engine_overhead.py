"""benchmarks/engine_overhead.py on a tiny grid: the pruned rows, and the Gram-row section whose
row must equal scipy's product on the same cuts (the benchmark's own correctness check)."""

import pytest


def _load():
    from benchmarks import engine_overhead

    return engine_overhead


def _table(lines, header_start):
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_tiny_grid_with_pruning_and_gram_reference(capsys):
    module = _load()
    module.main(
        [
            "--skip-qp",
            "--no-write",
            "--grid",
            "small:300:12",
            "small:300:30:p5",
            "--gram-reference",
            "small:300:12",
            "large:200:8",
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    runs = _table(lines, "| data | n | tokens")
    assert [r[4] for r in runs][0] == "12"
    iterations, cuts = runs[1][4].replace(")", "").split(" (")
    assert int(iterations) == 30 and int(cuts) < 30  # prune_after=5 dropped idle cuts
    for r in runs:
        assert 0.0 <= float(r[6].rstrip("%")) <= 100.0
    gram = _table(lines, "| data | n | dim | stored cuts")
    assert [r[0] for r in gram] == ["small", "large"]
    for r in gram:
        assert int(r[3]) in (11, 7)
        assert float(r[12]) <= 1e-12  # the working set's Gram row equals scipy's A @ a
        assert 2.0 <= float(r[5]) <= 12.0  # bytes per stored nonzero: int32 index + int16 counts .. float64


def test_bad_grid_entry_is_refused():
    module = _load()
    with pytest.raises(SystemExit, match="fourth field"):
        module.parse_grid_entry("small:300:12:x5", "12")
