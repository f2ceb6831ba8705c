"""benchmarks/plain_memory: the page from records (no run): one row per run, failures named,
the means per arm."""

from benchmarks.plain_memory import ARMS, render

META = dict(
    command="python -m benchmarks.plain_memory",
    date="2026-11-29",
    machine="m",
    load_before=[0],
    load_after=[0],
    train="t",
)


def _rec(arm, rss, wall, rc=0):
    rec = dict(arm=arm, repeat=0, wall_s=wall, cpu_s=wall, max_rss_mb=rss, returncode=rc)
    if rc == 0:
        rec.update(C=10000.0, status="converged", iterations=152, peak_working_set_mb=188.0)
    else:
        rec["error"] = "boom"
    return rec


def test_rows_and_means():
    names = list(ARMS)
    page = render(
        META, [_rec(names[0], 870.0, 100.0), _rec(names[1], 930.0, 110.0), _rec(names[0], 880.0, 120.0, rc=1)]
    )
    assert f"| {names[0]} | 0 | 100.0 | 100.0 | 870 | 188 | 10000 | converged | 152 |" in page
    assert "failed: boom" in page
    assert f"- {names[0]}: mean wall 100.0 s, mean peak RSS 870 MB (1 runs)" in page
    assert f"- {names[1]}: mean wall 110.0 s, mean peak RSS 930 MB (1 runs)" in page
