"""benchmarks/reproductions/pmtl_table8.py: the bound notes are computed from the rows (which side of the gap
is loose)."""

import pytest


@pytest.fixture(scope="module")
def pmtl():
    from benchmarks.reproductions import pmtl_table8

    return pmtl_table8


def _row(p, status, objective, lower):
    return {
        "task": "PKU",
        "templates": "tp2",
        "seed": 0,
        "C": 1000.0,
        "p": p,
        "status": status,
        "objective": objective,
        "lower_bound": lower,
        "iterations": 10,
    }


def test_bound_notes_only_uncertified_p_above_two(pmtl):
    rows = [_row(1.0, "time_limit", 5.0, -1.0), _row(2.0, "time_limit", 5.0, -1.0), _row(4.0, "converged", 5.0, 4.96)]
    assert pmtl.bound_notes(rows) == []


def test_bound_notes_say_which_side(pmtl):
    notes = pmtl.bound_notes([_row(4.0, "time_limit", 568.11, -0.42), _row(100.0, "time_limit", 300.0, 120.0)])
    assert len(notes) == 3 and "pnorm_primal" in notes[0]
    assert "p=4:" in notes[1] and "568.11" in notes[1] and "-0.42" in notes[1] and "still negative" in notes[1]
    assert "p=100:" in notes[2] and "120" in notes[2] and "still negative" not in notes[2]


def test_bound_notes_use_the_p2_optimum_as_upper_bound(pmtl):
    rows = [
        _row(2.0, "converged", 647.5, 640.0),
        _row(4.0, "time_limit", 700.0, 100.0),
        _row(100.0, "time_limit", 600.0, -5.0),
    ]
    notes = pmtl.bound_notes(rows)
    assert "647.5 bounds" in notes[1]  # 700 > 647.5: the p = 4 upper bound is loose
    assert "bounds this optimum" not in notes[2]  # 600 < 647.5: no such statement
