"""oracles.sequence_examples.SequenceExampleOracle: SPOM's per-sentence view of the chain oracle
gives exactly the oracle's own per-sentence hinge and subgradient, reading only its support."""

import numpy as np
import pytest

from oracles.sequence_examples import SequenceExampleOracle
from problems.sequence.tagger import SequenceTagger
from problems.synthetic import make_tagging_task


@pytest.fixture(scope="module")
def task():
    return make_tagging_task(
        n_train=300, n_test=60, length=10, n_labels=3, n_informative=2, n_noise=4, signal=0.6, seed=1
    )


@pytest.mark.parametrize("with_b", [True, False])
def test_sequence_examples_agree_with_the_oracle(task, with_b):
    templates = task.templates if with_b else task.templates.replace("B\n", "")
    est = SequenceTagger(templates)
    oracle = est.make_oracle(task.X_train[:40], task.y_train[:40])
    assert oracle.transitions == with_b
    ex = SequenceExampleOracle(oracle)
    rng = np.random.default_rng(0)
    for scale in (0.0, 0.3, 3.0):
        w = scale * rng.normal(size=oracle.dim)
        for i in range(oracle.n_samples):
            ref = oracle.example_oracle(w, i)
            got = ex.example_subgradient(i, w[ex.example_support(i)])
            assert got.value == pytest.approx(ref.value, rel=1e-12, abs=1e-12)
            dense = np.zeros(oracle.dim)
            dense[got.indices] = got.values
            np.testing.assert_array_equal(dense, ref.cut.slope.toarray().ravel())
            assert np.all(np.diff(got.indices) > 0)
            # the support holds every coordinate the subgradient touches
            assert np.isin(got.indices, ex.example_support(i)).all()
