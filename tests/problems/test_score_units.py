"""One unit for scores (issue 39): the Python API (``score``, ``path_["validation_score"]``, the
scorers) in fractions as scikit-learn's; everything the command line shows or writes (its text,
the report JSON, the plots it draws) in percent, the unit named. ``plot_path`` takes the unit of
the scores it is given and names it on the score axis."""

import json
import re

import pytest

import problems.plots as plots
from cutplane.exceptions import InputError
from problems import SequenceTaggerCV
from problems.cli.main import main
from problems.io.conll import write_columns
from problems.metrics import chunk_f1_scorer
from problems.solvers import CuttingPlane
from problems.synthetic import make_tagging_task

pytest.importorskip("matplotlib")

RENAME = {"L0": "B-NP", "L1": "I-NP", "L2": "O"}


@pytest.fixture(scope="module")
def task():
    t = make_tagging_task(n_train=40, n_test=20, length=8, n_labels=3, n_informative=2, n_noise=2, seed=3)
    y_tr = [[RENAME[v] for v in s] for s in t.y_train]
    y_te = [[RENAME[v] for v in s] for s in t.y_test]
    return t, y_tr, y_te


@pytest.fixture
def drawn(monkeypatch):
    """The figures plots.save_figure is given (then written as usual)."""
    figures = []
    save = plots.save_figure

    def keep(fig, path, **kw):
        figures.append((path, fig))
        return save(fig, path, **kw)

    monkeypatch.setattr(plots, "save_figure", keep)
    return figures


def test_cli_path_png_and_report_in_percent(task, tmp_path, capsys, drawn):
    t, y_tr, y_te = task
    write_columns(tmp_path / "train.txt", t.X_train, y_tr)
    write_columns(tmp_path / "dev.txt", t.X_test, y_te)
    (tmp_path / "t.tpl").write_text(t.templates)
    argv = [
        "train",
        "--task",
        "sequence",
        "--train",
        str(tmp_path / "train.txt"),
        "--templates",
        str(tmp_path / "t.tpl"),
    ]
    argv += ["--model", str(tmp_path / "m.npz"), "--C", "1", "10", "100", "--dev", str(tmp_path / "dev.txt")]
    argv += ["--executor", "serial", "--report", str(tmp_path / "r.json"), "--plot", str(tmp_path / "p")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["score_unit"] == "percent"
    scores = report["path"]["validation_score"]
    assert max(scores) > 1.0  # percent, not fractions (the model learns the synthetic task)
    # the printed choice: the chosen point's score, in percent and saying so
    printed = re.search(r"by chunk_f1 ([0-9.]+) \(percent\) on", out)
    assert printed is not None
    assert float(printed.group(1)) == pytest.approx(report["validation"]["score"], abs=5e-5)
    assert report["validation"]["score"] == pytest.approx(report["dev"]["f1"])
    # path.png: the score axis names percent and draws the report's numbers
    (fig,) = [fig for path, fig in drawn if path.name == "path.png"]
    ax = fig.axes[0]
    assert ax.get_ylabel() == "chunk_f1 (percent)"
    by_C = dict(zip(report["path"]["C"], scores))
    line = ax.lines[0]
    assert list(line.get_ydata()) == pytest.approx([by_C[c] for c in line.get_xdata()])


def test_estimator_scores_are_fractions(task):
    t, y_tr, y_te = task
    est = SequenceTaggerCV(t.templates, Cs=[1.0, 10.0], solver=CuttingPlane(eps=1e-2))
    est.fit(t.X_train, y_tr, validation_data=(t.X_test, y_te))
    assert 0.0 <= est.score(t.X_test, y_te) <= 1.0
    assert all(0.0 <= v <= 1.0 for v in est.path_["validation_score"])
    assert 0.0 <= chunk_f1_scorer(est, t.X_test, y_te) <= 1.0
    assert max(est.path_["validation_score"]) > 0.01  # not all zero: the unit test means something


def test_plot_path_takes_the_unit(tmp_path, drawn):
    path = {"C": [1.0, 10.0], "validation_score": [0.5, 0.75], "gap": [0.1, 0.2], "objective": [1.0, 2.0]}
    plots.plot_path(path, tmp_path / "f.png", unit="fraction", metric="chunk_f1")
    assert drawn[-1][1].axes[0].get_ylabel() == "chunk_f1 (fraction)"
    assert list(drawn[-1][1].axes[0].lines[0].get_ydata()) == [0.5, 0.75]  # drawn as given
    with pytest.raises(TypeError):
        plots.plot_path(path, tmp_path / "g.png")  # no default unit
    with pytest.raises(InputError, match="unit"):
        plots.plot_path(path, tmp_path / "g.png", unit="ratio")
    with pytest.raises(InputError, match="outside"):
        plots.plot_path(dict(path, validation_score=[50.0, 75.0]), tmp_path / "g.png", unit="fraction")
