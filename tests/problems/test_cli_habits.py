"""The ``cutplane`` command's habits (issue 23): progress on a terminal and quiet in pipes, on the
scale of ``--eps``; every score in percent, per chunk type, for every task, on stdout and in
JSON; ``train --dev`` scores on stdout; help for every option; ``--version``."""

import argparse
import json
import logging
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from problems.cli.main import build_parser, main
from problems.demo_data import make_binary
from problems.io.conll import write_columns
from problems.io.svmlight import read_svmlight, write_svmlight
from problems.linear.svm import LinearSVM
from problems.metrics.chunking import chunk_f1
from problems.synthetic import make_tagging_task

ROOT = Path(__file__).resolve().parents[2]
# two chunk types (NP, VP) so that per-type scores mean something
RENAME = {"L0": "B-NP", "L1": "I-NP", "L2": "B-VP", "L3": "O"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("habits")
    b = make_binary(n_samples=300, n_features=8, n_test=60, seed=1)
    write_svmlight(d / "bin.train.svm", b.X_train, b.y_train)
    write_svmlight(d / "bin.test.svm", b.X_test, b.y_test)
    task = make_tagging_task(n_train=40, n_test=20, length=8, n_labels=4, n_informative=2, n_noise=1, seed=5)
    write_columns(d / "train.txt", task.X_train, [[RENAME[t] for t in s] for s in task.y_train])
    write_columns(d / "test.txt", task.X_test, [[RENAME[t] for t in s] for s in task.y_test])
    (d / "t.tpl").write_text(task.templates)
    return d


def _binary(d, *extra):
    return main(
        ["train", "--task", "binary", "--train", str(d / "bin.train.svm"), "--C", "5", "--model", str(d / "b.npz")]
        + [str(a) for a in extra]
    )


def _tty(monkeypatch):
    """Standard error behaves as a terminal (pytest's capture stream otherwise says it is not)."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)


def _last(name, err):
    """The last value the progress counter showed for ``name`` (``name=value`` in its postfix)."""
    values = re.findall(rf"\b{name}=([-+0-9.e]+)", err)
    assert values, f"no {name}= in {err!r}"
    return float(values[-1])


# ------------------------------------------------------------------------------ progress
def test_progress_is_shown_on_a_terminal_and_not_in_a_pipe(files, capsys, monkeypatch):
    d = files
    assert _binary(d) == 0
    assert capsys.readouterr().err == ""  # a pipe (pytest's capture): nothing but what is asked
    _tty(monkeypatch)
    assert _binary(d) == 0
    err = capsys.readouterr().err
    assert "bmrm" in err and "it [" in err and "gap=" in err and "eps=" in err
    assert _binary(d, "--quiet") == 0
    assert capsys.readouterr().err == ""


def test_progress_in_a_pipe_when_asked(files, capsys):
    d = files
    assert _binary(d, "--progress") == 0
    assert "gap=" in capsys.readouterr().err
    assert _binary(d, "--quiet", "--progress") == 2  # one of them
    assert "not allowed with" in capsys.readouterr().err


def test_progress_is_an_open_ended_counter_on_the_scale_of_eps(files, capsys):
    """No ETA towards --max-iter; the gap, the eps and the upper bound the counter shows are those
    of the summary and the report (F = Omega + C * mean loss, not F / C)."""
    d = files
    assert _binary(d, "--progress", "--eps", "0.01", "--max-iter", "500", "--report", d / "r.json") == 0
    err = capsys.readouterr().err
    report = json.loads((d / "r.json").read_text())
    assert "/500" not in err and "<" not in err  # no budget as total, no ETA
    assert re.search(r"\d+it \[\d\d:\d\d", err)  # iterations and the time so far
    assert _last("eps", err) == pytest.approx(0.01)
    assert _last("gap", err) == pytest.approx(report["gap"], rel=1e-2)
    assert _last("upper", err) == pytest.approx(report["objective"], rel=1e-5)
    assert _last("lower", err) == pytest.approx(report["lower_bound"], rel=1e-5)
    assert report["gap"] <= 0.01 and report["C"] == 5.0  # on F / C, the counter would show a 5 times smaller gap


def test_progress_of_a_path_names_C_and_its_eps_on_F(files, capsys):
    d = files
    argv = ["train", "--task", "sequence", "--templates", str(d / "t.tpl"), "--train", str(d / "train.txt")]
    argv += ["--C", "1", "10", "--dev", str(d / "test.txt"), "--model", str(d / "s.npz"), "--progress"]
    # the grid given alone (the points past its edge: test_cli_c_grid's extension test)
    assert main(argv + ["--report", str(d / "r.json"), "--no-extend"]) == 0
    err = capsys.readouterr().err
    report = json.loads((d / "r.json").read_text())
    for C, part in zip((1, 10), err.split("C=10 (2 of 2)", 1)):
        assert _last("eps", part) == pytest.approx(0.01 * C)  # the grid's default eps, 0.01 * C on F
    last = report["path"]["gap"][1]
    assert _last("gap", err) == pytest.approx(last, rel=1e-2)


def test_spom_progress_on_F(files, capsys):
    d = files
    argv = ["train", "--task", "sequence", "--templates", str(d / "t.tpl"), "--train", str(d / "train.txt")]
    argv += ["--C", "10", "--solver", "spom", "--epochs", "3", "--eta0", "0.1", "--progress"]
    assert main(argv + ["--model", str(d / "sp.npz"), "--report", str(d / "r.json")]) == 0
    err = capsys.readouterr().err
    report = json.loads((d / "r.json").read_text())
    assert _last("objective", err) == pytest.approx(report["objective"], rel=1e-5)


def test_log_lines_and_the_counter_do_not_interleave(files, capsys, monkeypatch):
    """With --verbose on a terminal, every log line starts a line of its own: the counter is
    cleared before it (tqdm.write) instead of the line being glued after the counter's text."""
    d = files
    _tty(monkeypatch)
    root_level = logging.getLogger().level
    assert _binary(d, "--verbose") == 0
    err = capsys.readouterr().err
    logged = [line for line in err.split("\n") if re.search(r"bmrm it \d+: upper", line)]
    assert len(logged) >= 2
    for line in logged:
        assert line.split("\r")[-1].startswith("cutplane: bmrm it "), repr(line)
    assert "gap=" in err  # the counter was there too
    assert logging.getLogger().level == root_level  # main restored the logging set-up


def test_the_log_is_on_F_too(files, caplog):
    d = files
    with caplog.at_level(logging.INFO, logger="cutplane"):
        assert _binary(d, "--eps", "0.01", "--report", d / "r.json") == 0
    report = json.loads((d / "r.json").read_text())
    last = [r.getMessage() for r in caplog.records if " it " in r.getMessage()][-1]
    assert "(eps 0.01)" in last
    gap = float(re.search(r"gap ([-+0-9.e]+)", last).group(1))
    assert gap == pytest.approx(report["gap"], rel=1e-2)


def test_a_pipe_gets_no_counter_in_a_subprocess(files, tmp_path):
    d = files
    r = subprocess.run(
        [sys.executable, "-m", "problems.cli.main", "train", "--task", "binary", "--train", str(d / "bin.train.svm")]
        + ["--model", str(tmp_path / "m.npz")],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" and "certified gap" in r.stdout


# ---------------------------------------------------------------------------- evaluate
def test_evaluate_scores_a_linear_model_in_percent(files, capsys):
    d = files
    assert _binary(d) == 0
    capsys.readouterr()
    argv = ["evaluate", "--model", str(d / "b.npz"), "--test", str(d / "bin.test.svm"), "--report", str(d / "e.json")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    ev = json.loads((d / "e.json").read_text())
    X, y = read_svmlight(d / "bin.test.svm", n_features=8)
    expected = 100.0 * LinearSVM.load(d / "b.npz").score(X, y)
    assert ev["task"] == "binary" and ev["accuracy"] == pytest.approx(expected) and ev["n_samples"] == 60
    assert ev["n_correct"] == round(ev["accuracy"] * 60 / 100)
    assert out == f"accuracy {ev['accuracy']:.4f} n_correct {ev['n_correct']} n_samples 60\n"


def test_evaluate_prints_per_type_chunk_scores_as_in_the_json(files, capsys):
    d = files
    argv = ["train", "--task", "sequence", "--templates", str(d / "t.tpl"), "--train", str(d / "train.txt")]
    assert main(argv + ["--C", "10", "--model", str(d / "s.npz")]) == 0
    capsys.readouterr()
    argv = ["evaluate", "--model", str(d / "s.npz"), "--test", str(d / "test.txt"), "--report", str(d / "e.json")]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    ev = json.loads((d / "e.json").read_text())
    assert set(ev["per_type"]) == {"NP", "VP"}
    # the JSON's per-type scores are conlleval's (percent), from the API's chunk_f1
    from problems.io.conll import read_conll
    from problems.sequence.tagger import SequenceTagger

    gold = read_conll(d / "test.txt")
    ref = chunk_f1(gold.labels, SequenceTagger.load(d / "s.npz").predict(gold.inputs))
    for name, typed in ev["per_type"].items():
        t = ref.per_type[name]
        assert (typed["precision"], typed["recall"], typed["f1"]) == pytest.approx((t.precision, t.recall, t.f1))
        assert (typed["n_gold"], typed["n_pred"], typed["n_correct"]) == (t.n_gold, t.n_pred, t.n_correct)
    # stdout: the overall line, then one line per type; the same numbers
    first = dict(zip(lines[0].split()[::2], lines[0].split()[1::2]))
    assert {k: float(first[k]) for k in ("precision", "recall", "f1", "accuracy")} == pytest.approx(
        {k: ev[k] for k in ("precision", "recall", "f1", "accuracy")}, abs=1e-4
    )
    for name, line in zip(("NP", "VP"), lines[1:]):
        words = line.split()
        assert words[:2] == ["type", name]
        shown = dict(zip(words[2::2], words[3::2]))
        assert float(shown["f1"]) == pytest.approx(ev["per_type"][name]["f1"], abs=1e-4)
        assert int(shown["n_gold"]) == ev["per_type"][name]["n_gold"]
    assert len(lines) == 3


def test_train_dev_scores_on_stdout(files, capsys):
    d = files
    argv = ["train", "--task", "sequence", "--templates", str(d / "t.tpl"), "--train", str(d / "train.txt")]
    argv += ["--C", "10", "--dev", str(d / "test.txt"), "--model", str(d / "s.npz"), "--report", str(d / "r.json")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    dev = json.loads((d / "r.json").read_text())["dev"]
    line = next(ln for ln in out.splitlines() if ln.startswith(f"dev {d / 'test.txt'}: precision"))
    assert f"f1 {dev['f1']:.4f}" in line and "n_sentences 20" in line
    assert f"dev {d / 'test.txt'}: type NP " in out
    # the linear tasks: accuracy in percent, in the report and on stdout
    assert _binary(d, "--dev", d / "bin.test.svm", "--report", d / "r.json") == 0
    out = capsys.readouterr().out
    report = json.loads((d / "r.json").read_text())
    assert 50.0 < report["dev"]["accuracy"] <= 100.0 and 50.0 < report["train_accuracy"] <= 100.0
    assert f"dev {d / 'bin.test.svm'}: accuracy {report['dev']['accuracy']:.4f} n_samples 60" in out


def test_predict_reports_its_accuracy_in_percent(files, capsys):
    d = files
    assert _binary(d) == 0
    capsys.readouterr()
    assert main(["predict", "--model", str(d / "b.npz"), "--input", str(d / "bin.test.svm")]) == 0
    err = capsys.readouterr().err
    hits, n = map(int, re.search(r"\((\d+)/(\d+)\)", err).groups())
    assert f"accuracy {100.0 * hits / n:.4f} ({hits}/{n})" in err


# -------------------------------------------------------------------------------- help
def _parsers(parser, path=("cutplane",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, path + (name,))


def test_every_option_has_help_and_its_choices_appear():
    parsers = list(_parsers(build_parser()))
    assert {p[-1] for p, _ in parsers} >= {"cutplane", "train", "predict", "evaluate", "demo", "compare"}
    for path, parser in parsers:
        text = parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:  # every subcommand is described
                    assert choice.help, f"{' '.join(path)} {choice.dest}: no help"
                continue
            name = "/".join(action.option_strings) or action.dest
            assert action.help and action.help is not argparse.SUPPRESS, f"{' '.join(path)} {name}: no help"
            for choice in action.choices or ():
                assert str(choice) in text, f"{' '.join(path)} {name}: choice {choice!r} not in the help"


def test_top_level_help_names_every_task(capsys):
    """train and predict handle every task, not only SVMlight files."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    for word in ("SVMlight", "sequence", "segmenter", "parser", "--task"):
        assert word in helps["train"]
    assert "SVMlight" not in helps["predict"] and "task" in helps["predict"]
    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "train a model on an SVMlight file" not in out and "label an SVMlight file" not in out
    assert "--version" in out


def test_method_and_max_iter_are_explained(capsys):
    assert main(["train", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--method {bmrm,ls-bmrm,in-out,n-slack}" in out and "ls-bmrm (BMRM with a line search)" in out
    assert "in-out (BMRM querying between the best point and the reduced minimiser)" in out
    assert "n-slack (a working set per example)" in out
    assert "--max-iter N iteration budget" in out


def test_method_is_refused_where_it_does_not_apply(files, capsys):
    d = files
    argv = ["train", "--task", "sequence", "--templates", str(d / "t.tpl"), "--train", str(d / "train.txt")]
    assert main(argv + ["--C", "10", "--method", "ls-bmrm", "--model", str(d / "x.npz")]) == 2
    assert "--method ls-bmrm does not apply to --task sequence" in capsys.readouterr().err
    assert main(argv + ["--C", "10", "--method", "n-slack", "--model", str(d / "x.npz")]) == 2  # mtl by default
    assert "--method n-slack trains the structural SVM: it needs --regularizer ssvm, got mtl" in capsys.readouterr().err
    parse = ["train", "--task", "parse", "--train", str(d / "train.txt"), "--C", "10", "--method", "n-slack"]
    assert main(parse + ["--regularizer", "ssvm", "--model", str(d / "x.npz")]) == 2
    assert "--method n-slack does not apply to --task parse: the structured tasks run bmrm or in-out" in (
        capsys.readouterr().err
    )
    assert _binary(d, "--method", "ls-bmrm", "--report", d / "r.json") == 0
    assert json.loads((d / "r.json").read_text())["method"] == "ls-bmrm"


#: n-slack without the time rule of its passes (their number then does not depend on the machine's
#: load), on one thread: the run is the same on every machine.
NSLACK_REPRODUCIBLE = ["--method", "n-slack", "--sweep-time-ratio", "none", "--sweep-threads", "1"]


def test_sequences_train_with_the_n_slack_method(files, capsys):
    d = files
    argv = ["train", "--task", "sequence", "--templates", str(d / "t.tpl"), "--train", str(d / "train.txt")]
    common = ["--C", "10", "--regularizer", "ssvm", "--eps", "1e-4"]
    assert main(argv + common + [*NSLACK_REPRODUCIBLE, "--model", str(d / "n.npz"), "--report", str(d / "n.json")]) == 0
    assert main(argv + common + ["--model", str(d / "b.npz"), "--report", str(d / "b.json")]) == 0
    n_slack, bmrm = (json.loads((d / f"{k}.json").read_text()) for k in ("n", "b"))
    assert n_slack["converged"] and bmrm["converged"]
    assert n_slack["objective"] == pytest.approx(bmrm["objective"], abs=2e-4)
    assert n_slack["lower_bound"] <= bmrm["objective"] + 1e-9 and bmrm["lower_bound"] <= n_slack["objective"] + 1e-9


def test_version_comes_from_the_package_metadata(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"cutplane {version('cutplane')}\n"
