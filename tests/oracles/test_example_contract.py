"""The structured oracles answer the per-example contract under the same names, example index first
(issue 37): ``example_loss_augmented_argmax(i, w)``, ``example_argmax(i, w)``,
``example_joint_feature(i, y)``, ``example_loss(i, y)``; the former names keep working."""

import numpy as np
import scipy.sparse as sp

from cutplane.cuts import slope_to_dense
from oracles.dense_sequence import DenseSequenceOracle
from oracles.sequence import SequenceHingeOracle
from oracles.structured import StructuredOracle
from tests.oracles.structured_models import TinyChain, random_data

NAMES = ("example_loss_augmented_argmax", "example_argmax", "example_joint_feature", "example_loss")


def _chain_data(seed=0, n_feat=5, K=3):
    rng = np.random.default_rng(seed)
    ptr = np.concatenate([[0], np.cumsum(rng.integers(1, 5, size=4))])
    nt = int(ptr[-1])
    n_active = rng.integers(1, 3, size=nt)
    indices = np.concatenate([rng.choice(n_feat, size=k, replace=False) for k in n_active])
    indptr = np.concatenate([[0], np.cumsum(n_active)])
    y = rng.integers(0, K, size=nt)
    return rng, ptr, indices, indptr, y, n_feat, K


def test_sequence_oracles_answer_the_shared_names():
    rng, ptr, indices, indptr, y, n_feat, K = _chain_data()
    X = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(int(ptr[-1]), n_feat))
    for oracle in (
        SequenceHingeOracle(indptr, indices, ptr, y, n_feat, K),
        DenseSequenceOracle(X.toarray(), y, ptr, K),
    ):
        assert all(hasattr(oracle, name) for name in NAMES)
        w = rng.normal(size=oracle.dim)
        for i in range(oracle.n_samples):
            la = oracle.example_loss_augmented_argmax(i, w)
            np.testing.assert_array_equal(la, oracle.loss_augmented_argmax(w, i))
            np.testing.assert_array_equal(oracle.example_argmax(i, w), oracle.decode(w, i))
            assert oracle.example_loss(i, la) == oracle.loss(i, la)
            np.testing.assert_array_equal(
                slope_to_dense(oracle.example_joint_feature(i, la)), slope_to_dense(oracle.joint_feature(i, la))
            )


def test_structured_oracle_answers_the_shared_names():
    model = TinyChain(2, 2)
    rng = np.random.default_rng(1)
    X, Y = random_data(model, 4, rng)
    oracle = StructuredOracle(model, X, Y)
    w = rng.normal(size=model.dim)
    res = oracle(w)
    for i in range(4):
        np.testing.assert_array_equal(oracle.example_loss_augmented_argmax(i, w), res.argmax[i])
        np.testing.assert_array_equal(oracle.example_argmax(i, w), model.argmax(X[i], w))
        assert oracle.example_loss(i, res.argmax[i]) == model.loss(Y[i], res.argmax[i])
        np.testing.assert_array_equal(
            slope_to_dense(oracle.example_joint_feature(i, Y[i])), slope_to_dense(model.joint_feature(X[i], Y[i]))
        )


def test_parse_oracle_answers_the_loss_augmented_name():
    from problems.parsing.parser import DependencyParser
    from tests.problems.test_dependency_parser import TEMPLATES, make_treebank

    oracle, _, trees = DependencyParser(TEMPLATES)._make_oracle(make_treebank(6, seed=0))
    w = np.random.default_rng(2).normal(size=oracle.dim)
    for i in range(len(trees)):
        np.testing.assert_array_equal(oracle.example_loss_augmented_argmax(i, w), oracle.loss_augmented(i, w).heads)
