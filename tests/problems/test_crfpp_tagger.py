"""SequenceTagger with CRF++'s input-conditioned bigram templates: fit, predict, save / load."""

import numpy as np
import pytest

from cutplane.exceptions import InputError, ModelFormatError
from problems.sequence.tagger import SequenceTagger
from problems.solvers import SPOM, CuttingPlane


def xor_chain(rng, n):
    """y_t = y_{t-1} XOR gate_t: the label pair depends on the observation of column 1."""
    X, y = [], []
    for _ in range(n):
        gates = rng.integers(0, 2, size=int(rng.integers(2, 7)))
        labels = [int(gates[0])]
        for g in gates[1:]:
            labels.append(labels[-1] ^ int(g))
        X.append([(f"w{int(rng.integers(0, 4))}", f"g{g}") for g in gates])
        y.append(["AB"[k] for k in labels])
    return X, y


TEMPLATES = "U00:%x[0,1]\nU01:%x[-1,1]\nU%x[0,0]\nU%x[1,0]\nB\nB00:%x[0,1]\n"


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X, y = xor_chain(rng, 40)
    est = SequenceTagger(TEMPLATES, C=100.0, regularizer="ssvm", solver=CuttingPlane(eps=0.01)).fit(X, y)
    return est, xor_chain(rng, 30)


def test_conditioned_bigrams_learn_the_chain(fitted):
    est, (X, y) = fitted
    assert est.feature_index_.conditioned
    assert est.score(X, y) == 1.0
    assert est.coef_.shape == (est.feature_index_.dim(len(est.labels_)),)
    assert set(est.template_weights_) == {"U00", "U01", "U", "B", "B00"}


def test_save_and_load_keep_the_bigram_dictionary(fitted, tmp_path):
    est, (X, _) = fitted
    est.save(tmp_path / "m.npz")
    back = SequenceTagger.load(tmp_path / "m.npz")
    assert back.feature_index_.bigram_vocabulary_ == est.feature_index_.bigram_vocabulary_
    assert back.predict(X) == est.predict(X)
    assert back.predict(X, all_templates=True) == est.predict(X)


def test_model_file_check_of_the_bigram_arrays():
    from problems.sequence.model_file import _check_bigram_arrays  # noqa: PLC2701 (the check under test)

    names = np.array(["B", "B00:g0", "B00:g1"])
    ok = {"bigram_feature_names": names, "bigram_feature_groups": np.array([0, 1, 1])}
    _check_bigram_arrays(ok, True, 2, "m.npz")
    with pytest.raises(ModelFormatError, match="missing"):
        _check_bigram_arrays({"bigram_feature_names": names}, True, 2, "m.npz")
    with pytest.raises(ModelFormatError, match="non-decreasing"):
        _check_bigram_arrays(dict(ok, bigram_feature_groups=np.array([1, 0, 1])), True, 2, "m.npz")
    with pytest.raises(ModelFormatError, match="duplicate"):
        _check_bigram_arrays(dict(ok, bigram_feature_names=np.array(["B", "B", "C"])), True, 2, "m.npz")
    with pytest.raises(ModelFormatError, match="no input-conditioned"):
        _check_bigram_arrays(ok, False, 2, "m.npz")


def test_spom_refuses_conditioned_bigrams():
    X, y = xor_chain(np.random.default_rng(1), 10)
    with pytest.raises(InputError, match="cutting-plane"):
        SequenceTagger(TEMPLATES, C=10.0, regularizer="ssvm", solver=SPOM(epochs=1)).fit(X, y)
