"""Save / load of a SequenceTagger fitted on feature dicts (issue 39): the file stores the dict
keys (the groups), how numbers are read and, binned, the numeric keys' bin edges beside the
feature names, so the loaded model extracts the same features and predicts the same labels; a
damaged ``feature_dicts`` entry is refused on load; the command line (which reads columns of
text) refuses such a model by name."""

import numpy as np
import pytest

from cutplane.exceptions import InputError, ModelFormatError
from problems import SequenceTagger, SequenceTaggerCV
from problems.cli.main import main
from problems.demo_data import make_demo_tagging
from problems.io.conll import write_columns
from problems.model_io import load_model, save_model
from problems.sequence.feature_dicts import DictFeatureIndex
from problems.solvers import CuttingPlane


def _dicts(X, seed):
    """Feature dicts with every kind of value: str, bool, lists of str, a constant bias, and two
    numbers with several bins (one of them absent on some tokens)."""
    rng = np.random.default_rng(seed)
    out = []
    for sent in X:
        toks = []
        for t, row in enumerate(sent):
            d = {"w": row[0], "pos": row[1], "bias": 1.0, "sfx": [row[0][-1:], row[0][-2:]], "len": len(row[0])}
            d["BOS"] = t == 0
            d["prev"] = sent[t - 1][0] if t else "<s>"
            if rng.random() < 0.7:
                d["score"] = float(rng.normal())
            toks.append(d)
        out.append(toks)
    return out


@pytest.fixture(scope="module")
def data():
    t = make_demo_tagging(seed=3, n_train=40, n_test=20)
    return (
        _dicts(t.X_train, 0),
        [list(s) for s in t.y_train],
        _dicts(t.X_test, 1),
        t.X_test,
        [list(s) for s in t.y_test],
    )


@pytest.fixture(scope="module")
def fitted(data):
    X, y, *_ = data
    return SequenceTagger(C=10.0, min_count=1, solver=CuttingPlane(eps=1e-2)).fit(X, y)


@pytest.fixture(scope="module")
def fitted_bins(data):
    """A model whose numbers are binned (``DictFeatureIndex(numbers="bins")``, the reading of files
    written before real values): the tagger fitted with that index."""
    import problems.sequence.tagger as tagger_module

    X, y, *_ = data
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tagger_module, "_feature_index", lambda t, X, mc: DictFeatureIndex(min_count=mc, numbers="bins"))
        return SequenceTagger(C=10.0, min_count=1, solver=CuttingPlane(eps=1e-2)).fit(X, y)


@pytest.mark.parametrize("numbers", ["real", "bins"])
def test_round_trip_predicts_the_same(fitted, fitted_bins, data, tmp_path, numbers):
    _, _, X_test, _, y_test = data
    est = fitted if numbers == "real" else fitted_bins
    assert est.feature_index_.numbers == numbers
    if numbers == "bins":
        assert len(est.feature_index_.numeric_edges_["score"]) > 1  # several bins to restore
    else:  # one real-valued feature per numeric key, its values restored by the loaded index
        assert est.feature_index_.numeric_edges_ == {} and "score" in est.feature_index_.vocabulary_
    est.save(tmp_path / "m.npz")
    back = SequenceTagger.load(tmp_path / "m.npz")
    assert type(back) is SequenceTagger and back.templates is None
    idx, idx2 = est.feature_index_, back.feature_index_
    assert isinstance(idx2, DictFeatureIndex)
    assert idx2.template_names == idx.template_names
    assert idx2.vocabulary_ == idx.vocabulary_
    assert set(idx2.numeric_edges_) == set(idx.numeric_edges_)
    for key, edges in idx.numeric_edges_.items():
        assert np.array_equal(idx2.numeric_edges_[key], edges)  # exact floats through JSON
    np.testing.assert_array_equal(idx2.feature_groups_, idx.feature_groups_)
    np.testing.assert_array_equal(idx2.group_offsets_, idx.group_offsets_)
    a, b = idx.transform(X_test), idx2.transform(X_test)
    for name in ("indptr", "indices", "sentence_ptr"):
        np.testing.assert_array_equal(getattr(b, name), getattr(a, name))
    assert idx2.numbers == idx.numbers == numbers
    assert (a.values is None) == (numbers == "bins") and (b.values is None) == (a.values is None)
    if a.values is not None:
        np.testing.assert_array_equal(b.values, a.values)
    np.testing.assert_array_equal(back.coef_, est.coef_)
    assert back.predict(X_test) == est.predict(X_test)
    assert back.predict(X_test, all_templates=True) == est.predict(X_test)
    assert back.score(X_test, y_test) == est.score(X_test, y_test)
    assert back.template_weights_ == est.template_weights_
    assert back.active_templates_ == est.active_templates_
    assert (back.objective_, back.lower_bound_, back.gap_) == (est.objective_, est.lower_bound_, est.gap_)
    # values outside the training range: the end bins, or the feature times the value, as before saving
    far = [[{**tok, "score": 1e6, "len": -5} for tok in sent] for sent in X_test[:3]]
    assert back.predict(far) == est.predict(far)


def test_loaded_model_keeps_refusing_token_rows(fitted, data, tmp_path):
    fitted.save(tmp_path / "m.npz")
    back = SequenceTagger.load(tmp_path / "m.npz")
    with pytest.raises(InputError, match="fitted on feature dicts"):
        back.predict(data[3])


def test_cv_model_round_trip(data, tmp_path):
    X, y, X_test, *_ = data
    est = SequenceTaggerCV(Cs=[1.0, 10.0], min_count=1, solver=CuttingPlane(eps=1e-2)).fit(X, y)
    est.save(tmp_path / "cv.npz")
    back = SequenceTagger.load(tmp_path / "cv.npz")
    assert type(back) is SequenceTaggerCV and back.templates is None
    assert back.C_ == est.C_
    assert back.predict(X_test) == est.predict(X_test)


def _rewrite(src, dst, edit):
    arrays, meta = load_model(src)
    meta = {k: v for k, v in meta.items() if k not in ("format", "format_version", "arrays")}
    edit(meta)
    save_model(dst, arrays, meta)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda m: m["feature_dicts"].update(keys=m["feature_dicts"]["keys"][1:]), "group_offsets"),
        (lambda m: m["feature_dicts"].update(keys=["B", *m["feature_dicts"]["keys"][1:]]), "feature_dicts"),
        (lambda m: m["feature_dicts"]["numeric_edges"].update(score=[1.0, 0.5]), "increasing"),
        (lambda m: m["feature_dicts"]["numeric_edges"].update(nokey=[1.0]), "numeric_edges"),
        (lambda m: m["feature_dicts"].pop("numeric_edges"), "feature_dicts"),
        (lambda m: m["feature_dicts"].update(numbers="quantiles"), "feature_dicts"),
        (lambda m: m.update(feature_dicts=[]), "feature_dicts"),
        (lambda m: m.update(templates="U00:%x[0,0]\nB\n"), "templates"),
    ],
)
def test_damaged_feature_dicts_entry_refused(fitted, tmp_path, edit, match):
    fitted.save(tmp_path / "m.npz")
    _rewrite(tmp_path / "m.npz", tmp_path / "bad.npz", edit)
    with pytest.raises(ModelFormatError, match=match):
        SequenceTagger.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("task", [None, "sequence"])
@pytest.mark.parametrize("command", ["evaluate", "predict"])
def test_cli_refuses_a_feature_dict_model(fitted, data, tmp_path, capsys, task, command):
    """Whether or not the file names a task, evaluate and predict say the model holds feature dicts."""
    fitted.save(tmp_path / "m.npz", extra_meta=None if task is None else {"task": task})
    write_columns(tmp_path / "test.txt", data[3], data[4])
    flag = "--test" if command == "evaluate" else "--input"
    assert main([command, "--model", str(tmp_path / "m.npz"), flag, str(tmp_path / "test.txt")]) == 2
    err = capsys.readouterr().err
    assert "fitted on feature dicts" in err and "m.npz" in err


def test_dump_of_a_feature_dict_model(fitted, tmp_path, capsys):
    fitted.save(tmp_path / "m.npz", extra_meta={"task": "sequence"})
    assert main(["dump", "--model", str(tmp_path / "m.npz")]) == 0
    out = capsys.readouterr().out
    keys = [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("# feature key: ")]
    assert keys == fitted.feature_index_.keys_
    assert "# template:" not in out
