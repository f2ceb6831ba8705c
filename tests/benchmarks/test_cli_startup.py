"""benchmarks/cli_startup.py in its quick mode: every command runs once, with the exit status it
should have (the refused model path: 2), and the page lists each with its target; no time is
asserted (the figures are on docs/results/cli_startup.md)."""


def test_quick_run_times_every_command(capsys):
    from benchmarks import cli_startup

    best = cli_startup.main(["--quick"])
    out = capsys.readouterr().out
    names = [name for name, _, _ in cli_startup.COMMANDS]
    assert list(best) == names
    for name in names:
        assert set(best[name]) == {"this tree"}
        assert 0.0 < best[name]["this tree"] < 120.0
        assert f"| {name} |" in out
    assert "| cutplane --version | <= 0.5 |" in out and "| cutplane evaluate, 100 sentences | <= 1.5 |" in out
