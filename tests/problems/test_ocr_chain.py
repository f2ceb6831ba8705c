"""OCR chain features: blocks reproduce their kernels; folds; the oracle and accuracy on real words."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from cutplane.exceptions import InputError
from problems.mkl.ocr_chain import (
    OCRChainFeaturizer,
    OCRWords,
    char_accuracy,
    fold_split,
    load_ocr_letters,
    ocr_chain_oracle,
)


def _pixels(seed, n=12):
    rng = np.random.default_rng(seed)
    P = (rng.random((n, 128)) < 0.25).astype(np.uint8)
    P[:, 0] = 1  # no empty image
    return P


def _block(F, name):
    j = F.block_names.index(name)
    return F.X[:, F.feature_groups == j].toarray()


@pytest.mark.parametrize("seed", [0, 1])
def test_blocks_reproduce_the_normalised_kernels(seed):
    P = _pixels(seed).astype(float)
    fz = OCRChainFeaturizer(n_components=P.shape[0], seed=seed)
    F = fz.fit_transform(P.astype(np.uint8))
    # linear, unit diagonal: cosine similarity
    L = _block(F, "linear")
    n = np.linalg.norm(P, axis=1)
    np.testing.assert_allclose(L @ L.T, (P @ P.T) / np.outer(n, n), atol=1e-12)
    # quadratic: (x.y + 1)^2 normalised to unit diagonal, exactly
    Q = _block(F, "quadratic")
    K = (P @ P.T + 1.0) ** 2
    d = np.sqrt(np.diag(K))
    np.testing.assert_allclose(Q @ Q.T, K / np.outer(d, d), atol=1e-10)
    # Gaussian: Nystroem with every training point as a landmark is exact on the training points
    G = _block(F, "gaussian")
    sq = ((P[:, None, :] - P[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(G @ G.T, np.exp(-sq / 10.0), atol=1e-6)
    assert np.all(np.diff(F.feature_groups) >= 0)
    assert F.X.shape[1] == 128 + 128 * 127 // 2 + 128 + 1 + P.shape[0]


def test_unnormalised_quadratic_block_and_block_subset():
    P = _pixels(3)
    F = OCRChainFeaturizer(blocks=("quadratic",), normalize=False).fit_transform(P)
    Q = F.X.toarray()
    Pf = P.astype(float)
    np.testing.assert_allclose(Q @ Q.T, (Pf @ Pf.T + 1.0) ** 2, rtol=1e-12)
    assert F.block_names == ["quadratic"] and np.all(F.feature_groups == 0)


def test_bad_inputs():
    with pytest.raises(InputError):
        OCRChainFeaturizer(blocks=("cubic",))
    with pytest.raises(InputError):
        OCRChainFeaturizer(blocks=("linear", "linear"))
    with pytest.raises(InputError):
        OCRChainFeaturizer().fit(np.full((3, 128), 2))
    with pytest.raises(NotFittedError, match="not fitted"):
        OCRChainFeaturizer().transform(_pixels(0))


@pytest.mark.data
def test_folds_and_oracle_on_real_words(data_dir):
    letters = load_ocr_letters()
    train, test = fold_split(letters, 0)
    assert train.n_words == 626 and train.n_chars == 4617  # README counts of fold 0
    assert train.n_words + test.n_words == 6877
    assert np.all(letters.folds[train.word_index] == 0) and np.all(letters.folds[test.word_index] != 0)
    small, small_test = fold_split(letters, 3, n_train_words=20, n_test_words=15, seed=1)
    assert small.n_words == 20 and small_test.n_words == 15
    assert np.all(letters.folds[small.word_index] == 3)
    fz = OCRChainFeaturizer(n_components=40).fit(small.pixels)
    F = fz.transform(small.pixels)
    o = ocr_chain_oracle(small, F)
    assert o.n_samples == 20 and o.n_groups == 4
    w = np.random.default_rng(0).normal(size=o.dim)
    pred = o.decode(w)
    # char_accuracy builds the features in batches: it must agree with one decode of all words
    assert char_accuracy(w, small, fz, batch_words=7) == pytest.approx(np.mean(pred == small.labels))
    with pytest.raises(InputError):
        fold_split(letters, 10)
    with pytest.raises(InputError):
        ocr_chain_oracle(OCRWords(small.pixels[:5], small.labels[:5], np.array([0, 5]), np.array([0])), F)
