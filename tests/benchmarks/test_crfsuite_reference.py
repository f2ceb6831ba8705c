"""benchmarks/crfsuite_reference.py: CRFsuite trains on exactly our U-template feature strings.

python-crfsuite is in the ``test`` extra, so it is imported normally (a missing install fails here,
it is not skipped).
"""

import json

import pycrfsuite
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.crfsuite_reference import (
    CRFsuiteRun,
    crfsuite_attributes,
    evaluate,
    main,
    predict_crfsuite,
    token_feature_strings,
    train_crfsuite,
)
from cutplane.exceptions import InputError
from problems.demo_data import write_tagging_files
from problems.sequence.feature_index import FeatureIndex
from problems.sequence.template_sets import CHUNKING, NER134
from problems.synthetic import make_tagging_task

_WORDS = st.sampled_from(["a", "b", "c", "d/e", "%x", "_B-1", "ü"])
_TAGS = st.sampled_from(["NN", "VB", "DT"])
_SENTENCE = st.lists(st.tuples(_WORDS, _TAGS), min_size=1, max_size=7)


def _feature_strings_of(index, sentence):
    """Per token, the names of the feature ids FeatureIndex.transform gives (ids increase within a token)."""
    feats = index.transform([sentence])
    names = index.feature_names()
    return [[names[k] for k in feats.indices[feats.indptr[t] : feats.indptr[t + 1]]] for t in range(len(sentence))]


@settings(max_examples=60)
@given(
    corpus=st.lists(_SENTENCE, min_size=1, max_size=6),
    probe=_SENTENCE,
    min_count=st.integers(1, 3),
    templates=st.sampled_from([CHUNKING, NER134]),
)
def test_attributes_are_our_feature_strings(corpus, probe, min_count, templates):
    index = FeatureIndex(templates, min_count=min_count).fit(corpus)
    for sentence in [*corpus, probe]:
        assert crfsuite_attributes(index, sentence) == _feature_strings_of(index, sentence)
    # without the dictionary: every U template gives one string per token, in template order
    raw = token_feature_strings(templates, probe)
    n_unigram = sum(1 for t in index.templates if t.kind == "U")
    assert [len(r) for r in raw] == [n_unigram] * len(probe)
    if min_count == 1:
        fitted = FeatureIndex(templates).fit([probe])
        assert raw == _feature_strings_of(fitted, probe)


def test_crfpp_edge_expansion():
    raw = token_feature_strings(CHUNKING, [("He", "PRP"), ("runs", "VBZ")])
    first = dict(s.split(":", 1) for s in raw[0])
    assert first["U00"] == "_B-2" and first["U02"] == "He" and first["U06"] == "He/runs"
    assert first["U30"] == "_B-3/_B+2" and first["U31"] == "_B+1/_B-2"
    second = dict(s.split(":", 1) for s in raw[1])
    assert second["U13"] == "_B+1" and second["U14"] == "_B+2" and second["U05"] == "He/runs"


def test_crfsuite_learns_the_synthetic_task_on_our_features(tmp_path):
    task = make_tagging_task(seed=0)
    run = train_crfsuite(task.X_train, task.y_train, task.templates, min_count=2, model_path=tmp_path / "m.crfsuite")
    assert isinstance(run, CRFsuiteRun)
    assert run.params["c2"] == 1.0 and run.params["c1"] == 0.0
    assert run.n_iterations > 0 and run.seconds >= 0 and run.cpu_seconds >= 0
    assert (tmp_path / "m.crfsuite").read_bytes() == run.model
    # the model's attribute dictionary is our dictionary after min_count
    tagger = pycrfsuite.Tagger()
    tagger.open(str(tmp_path / "m.crfsuite"))
    assert set(tagger.info().attributes) == set(run.feature_index.vocabulary_)
    assert run.n_attributes == len(run.feature_index.vocabulary_)
    pred = run.predict(task.X_test)
    assert pred == predict_crfsuite(run, task.X_test)
    acc = evaluate(task.y_test, pred)["accuracy"]
    gold = [lab for labels in task.y_test for lab in labels]
    chance = 100.0 * max(gold.count(lab) for lab in set(gold)) / len(gold)
    assert acc >= chance + 30.0, (acc, chance)


def test_cli_on_files(tmp_path, capsys):
    task = make_tagging_task(n_train=60, n_test=30, seed=1)
    files = write_tagging_files(task, tmp_path)
    record = main(
        ["--train", str(files["train"]), "--test", str(files["test"]), "--templates", str(files["templates"])]
    )
    printed = json.loads(capsys.readouterr().out.strip())
    assert printed == record
    assert record["c2"] == 1.0 and record["n_sentences"] == 60 and record["iterations"] > 0
    assert 0.0 <= record["test.txt_accuracy"] <= 100.0
    assert "test.txt_f1" not in record  # L0, L1, ... is not a chunk tag set


def test_bad_input():
    task = make_tagging_task(n_train=5, n_test=1, seed=2)
    with pytest.raises(InputError, match="sentences"):
        train_crfsuite(task.X_train, task.y_train[:-1], task.templates)
    with pytest.raises(InputError, match="c2"):
        train_crfsuite(task.X_train, task.y_train, task.templates, c2=-1.0)
    with pytest.raises(InputError, match="labels"):
        train_crfsuite(task.X_train, [y[:-1] for y in task.y_train], task.templates)
    with pytest.raises(InputError, match="columns"):
        token_feature_strings("U00:%x[0,3]\n", [("a", "b")])


@pytest.mark.data
def test_conll2000_subset(data_dir, capsys):
    record = main(["--data", "conll2000", "--max-sentences", "300", "--max-test-sentences", "200"])
    assert record["n_sentences"] == 300 and record["test_f1"] > 70.0
