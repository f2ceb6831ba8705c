"""oracles.parse_examples.ParseExampleOracle: SPOM's per-sentence view of the parse oracle gives
the same hinge and subgradient as the oracle's own per-sentence decoding on the full w, and SPOM
reading it makes the same iterates as through the full-vector adapter."""

import numpy as np
import pytest

from cutplane.online import as_example_oracle, spom
from cutplane.regularizers import MixedNorm
from oracles.parse_examples import ParseExampleOracle
from problems.parsing.parser import DependencyParser, TreeDecoder
from tests.problems.test_dependency_parser import TEMPLATES, make_treebank


@pytest.fixture(scope="module")
def data():
    return make_treebank(60, seed=0), make_treebank(60, seed=1)


@pytest.mark.parametrize("projective, normalize_loss", [(False, False), (True, True)])
def test_parse_examples_view_equals_oracle_per_sentence(data, projective, normalize_loss):
    """The sparse per-sentence view gives the same hinge and subgradient as the oracle's own
    ``loss_augmented`` on the full w (the adapter SPOM would otherwise use)."""
    train, _ = data
    est = DependencyParser(TEMPLATES, decoder=TreeDecoder(projective=projective), normalize_loss=normalize_loss)
    oracle, feats, trees = est._make_oracle(train[:15])
    view = ParseExampleOracle(feats, trees, projective=projective, single_root=True, normalize_loss=normalize_loss)
    full = as_example_oracle(oracle)
    assert full.example_support(0) is None  # the adapter reads all of w
    rng = np.random.default_rng(1)
    for _ in range(3):
        w = rng.normal(size=oracle.dim)
        for i in range(len(trees)):
            sup = view.example_support(i)
            a, b = view.example_subgradient(i, w[sup]), full.example_subgradient(i, w)
            assert np.all(np.diff(a.indices) > 0) and np.all(np.isin(a.indices, sup))
            assert a.value == pytest.approx(b.value, abs=1e-10)
            dense_a, dense_b = np.zeros(oracle.dim), np.zeros(oracle.dim)
            dense_a[a.indices], dense_b[b.indices] = a.values, b.values
            np.testing.assert_allclose(dense_a, dense_b, atol=1e-12)


def test_spom_view_and_full_adapter_give_the_same_iterates(data):
    train, _ = data
    est = DependencyParser(TEMPLATES)
    oracle, feats, trees = est._make_oracle(train[:20])
    groups = est.featurizer_.coordinate_groups()
    reg = MixedNorm(groups, p=1.0, n_groups=len(TEMPLATES))
    view = ParseExampleOracle(feats, trees, projective=False, single_root=True, normalize_loss=False)
    kw = dict(epochs=3, eta0=0.5, seed=4, batch_oracle=oracle, groups=groups, n_groups=len(TEMPLATES))
    lazy = spom(view, reg, 0.2, **kw)
    dense = spom(as_example_oracle(oracle), reg, 0.2, **kw)
    assert lazy.lazy and not dense.lazy
    np.testing.assert_allclose(lazy.w, dense.w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lazy.history.objective, dense.history.objective, rtol=1e-9)
