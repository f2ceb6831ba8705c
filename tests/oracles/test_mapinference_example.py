"""The teaching example reproduces the situation of the chapter's Fig. 1.4."""

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from oracles.mapinference import max_sum_diffusion

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "map_grid_tightening.py"


def _load():
    """The example is a script (examples/ is not a package): its globals, run as a module that is not __main__."""
    return SimpleNamespace(**runpy.run_path(str(SCRIPT), run_name="example_map_grid_tightening"))


def test_fig_1_4_situation():
    mod = _load()
    inst, res, steps = mod.run()
    assert inst.shape == (8, 8) and inst.unary.shape[1] == 4
    diff = max_sum_diffusion(inst.unary, inst.pairwise, inst.edges)
    assert diff.converged and not diff.tight  # (a): diffusion converges with a non-tight bound
    assert [s.csp_status for s in steps] == ["unsat", "unsat", "sat"]
    assert res.tight and res.n_added == 2 and res.status == "tight"
    first, second = res.added[0][0], res.added[1][0]
    assert len(set(first) & set(second)) == 2  # (b): a new, adjacent cycle became unsatisfiable
    bounds = [s.upper_bound for s in steps]
    assert bounds[0] > bounds[1] > bounds[2]  # each added cycle improves the bound
    assert np.all(np.diff(res.bound_history) <= 1e-9 * (1 + abs(bounds[0])))
    assert abs(res.gap) <= 1e-6  # the decoded labelling attains the bound: exact MAP


def test_script_writes_png(tmp_path):
    mod = _load()
    mod.main(["--out", str(tmp_path)])
    png = tmp_path / "map_grid_tightening.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
