"""A sequence model applied without scikit-learn (issue 39: ``cutplane evaluate`` of a small model
on 100 sentences within 1.5 s; importing scikit-learn's ``BaseEstimator`` alone took about a
second). ``TaggerModel`` reads the file with the estimator's checks and labels as the estimator
does; the evaluate / predict / dump commands of a sequence model never import scikit-learn."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from cutplane.exceptions import ModelFormatError
from problems.io.conll import write_columns
from problems.model_io import load_model, save_model
from problems.sequence.model_file import PARAM_NAMES, TaggerModel
from problems.sequence.tagger import MODEL_SCHEMA, SequenceTagger, SequenceTaggerCV
from problems.solvers import CuttingPlane
from problems.synthetic import make_tagging_task


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("taggermodel")
    task = make_tagging_task(
        n_train=60, n_test=30, length=6, n_labels=3, n_informative=3, n_noise=2, signal=0.5, seed=4
    )
    est = SequenceTagger(task.templates, C=10.0, solver=CuttingPlane(eps=1e-2)).fit(task.X_train, task.y_train)
    est.save(d / "m.npz", extra_meta={"task": "sequence"})
    write_columns(d / "test.txt", task.X_test, task.y_test)
    return d, est, task


def test_param_names_are_the_estimators():
    names = set(SequenceTagger._get_param_names()) | set(SequenceTaggerCV._get_param_names())
    assert names == PARAM_NAMES
    assert PARAM_NAMES <= set(MODEL_SCHEMA.params_of)


def test_tagger_model_labels_as_the_estimator(fitted):
    d, est, task = fitted
    light, full = TaggerModel.load(d / "m.npz"), SequenceTagger.load(d / "m.npz")
    assert light.templates == full.templates  # the stored templates (the fitted text may end in a newline)
    np.testing.assert_array_equal(light.coef_, est.coef_)
    assert light.labels_.labels == est.labels_.labels
    assert light.active_templates_ == est.active_templates_
    assert (light.objective_, light.lower_bound_, light.gap_) == (est.objective_, est.lower_bound_, est.gap_)
    assert light.predict(task.X_test) == full.predict(task.X_test) == est.predict(task.X_test)
    assert light.predict(task.X_test, all_templates=True) == est.predict(task.X_test)


def test_tagger_model_checks_the_file(fitted, tmp_path):
    d, _, _ = fitted
    arrays, meta = load_model(d / "m.npz")
    meta = {k: v for k, v in meta.items() if k not in ("format", "format_version", "arrays")}
    save_model(tmp_path / "other.npz", arrays, dict(meta, estimator="LinearSVM"))
    with pytest.raises(ModelFormatError, match="expected SequenceTagger"):
        TaggerModel.load(tmp_path / "other.npz")
    save_model(tmp_path / "params.npz", arrays, dict(meta, params=dict(meta["params"], nope=1)))
    with pytest.raises(ModelFormatError, match="unknown hyper-parameters"):
        TaggerModel.load(tmp_path / "params.npz")
    save_model(tmp_path / "coef.npz", dict(arrays, coef=arrays["coef"][:-1]), meta)
    with pytest.raises(ModelFormatError, match="coef"):
        TaggerModel.load(tmp_path / "coef.npz")


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--model", "m.npz", "--test", "test.txt"],
        ["predict", "--model", "m.npz", "--input", "test.txt", "--output", "out.txt"],
        ["predict", "--model", "m.npz", "--input", "test.txt", "--output", "out.txt", "--nbest", "2"],
        ["dump", "--model", "m.npz", "--output", "dump.txt"],
    ],
)
def test_applying_a_sequence_model_imports_no_sklearn(fitted, argv):
    d, _, _ = fitted
    code = textwrap.dedent(
        f"""
        import sys
        from problems.cli.main import main
        status = main({argv!r})
        heavy = sorted(m for m in sys.modules if m == "sklearn" or m.startswith(("sklearn.", "scipy.stats", "pandas")))
        print(status, heavy)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=d, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "0 []"
