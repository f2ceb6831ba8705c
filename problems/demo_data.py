"""Small generated datasets, for the demo, the README and quick tests.

Classification (:func:`make_binary`, :func:`make_multiclass`) and the tagging task of
``cutplane demo`` (:func:`make_demo_tagging`: :func:`problems.synthetic.make_tagging_task`
with the settings in :data:`DEMO_TAGGING`). The data are drawn from an explicit
``numpy.random.Generator`` seeded by the caller, so a given seed gives the same dataset on
every machine; nothing is downloaded or shipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError
from problems.validation import check_int, check_positive

__all__ = [
    "DemoData",
    "make_binary",
    "make_multiclass",
    "write_demo_files",
    "DEMO_TAGGING",
    "make_demo_tagging",
    "write_tagging_files",
]


class DemoData(NamedTuple):
    """A train/test split of a generated dataset.

    Attributes
    ----------
    X_train : ndarray or csr_matrix of shape (n_train, n_features)
    y_train : ndarray of shape (n_train,)
    X_test : ndarray or csr_matrix of shape (n_test, n_features)
    y_test : ndarray of shape (n_test,)
    """

    X_train: object
    y_train: np.ndarray
    X_test: object
    y_test: np.ndarray


def _check_density(density):
    density = check_positive(density, "density")
    if density > 1.0:
        raise InputError(f"must be in (0, 1], got {density}", field="density")
    return density


def _features(rng, n, d, density):
    X = rng.standard_normal((n, d)) / np.sqrt(d * density)
    if density < 1.0:
        X = sp.csr_matrix(X * (rng.random((n, d)) < density))
    return X


def _split(X, y, n_test):
    n = y.shape[0] - n_test
    return DemoData(X[:n], y[:n], X[n:], y[n:])


def make_binary(n_samples=2000, n_features=50, *, noise=0.3, density=1.0, n_test=500, seed=0):
    """Linearly separable-ish binary data: ``y = sign(X @ w* + noise * e)`` in {-1, +1}.

    Parameters
    ----------
    n_samples : int
        Training examples (``n_test`` more are drawn for the test split).
    n_features : int
    noise : float
        Standard deviation of the label noise ``e`` added before taking the sign.
    density : float in (0, 1]
        Fraction of nonzero features; below 1 the features are a csr_matrix.
    n_test : int
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    DemoData
    """
    n_samples = check_int(n_samples, "n_samples")
    n_features = check_int(n_features, "n_features")
    n_test = check_int(n_test, "n_test", min_value=0)
    density = _check_density(density)
    noise = check_positive(noise, "noise", allow_zero=True)
    rng = np.random.default_rng(seed)
    n = n_samples + n_test
    X = _features(rng, n, n_features, density)
    w_star = rng.standard_normal(n_features)
    t = np.asarray(X @ w_star).ravel() + noise * rng.standard_normal(n)
    y = np.where(t >= 0, 1.0, -1.0)
    return _split(X, y, n_test)


def make_multiclass(n_samples=2000, n_features=50, n_classes=4, *, noise=0.5, density=1.0, n_test=500, seed=0):
    """Multiclass data: ``y = argmax_k (X @ W*.T + noise * E)``, labels ``0 .. n_classes - 1``.

    Parameters
    ----------
    n_samples, n_features, n_test : int
    n_classes : int, >= 2
    noise : float
        Standard deviation of the Gaussian noise on the class scores.
    density : float in (0, 1]
    seed : int

    Returns
    -------
    DemoData
    """
    n_samples = check_int(n_samples, "n_samples")
    n_features = check_int(n_features, "n_features")
    n_classes = check_int(n_classes, "n_classes", min_value=2)
    n_test = check_int(n_test, "n_test", min_value=0)
    density = _check_density(density)
    noise = check_positive(noise, "noise", allow_zero=True)
    rng = np.random.default_rng(seed)
    n = n_samples + n_test
    X = _features(rng, n, n_features, density)
    W_star = rng.standard_normal((n_classes, n_features))
    scores = np.asarray(X @ W_star.T) + noise * rng.standard_normal((n, n_classes))
    y = np.argmax(scores, axis=1).astype(np.float64)
    return _split(X, y, n_test)


def write_demo_files(folder, *, seed=0):
    """Write ``binary.train.svm``, ``binary.test.svm``, ``multiclass.train.svm`` and
    ``multiclass.test.svm`` (SVMlight format) into ``folder``; returns their paths.

    Returns
    -------
    dict of str to pathlib.Path
        Keys ``"binary.train"``, ``"binary.test"``, ``"multiclass.train"``, ``"multiclass.test"``.
    """
    from problems.io.svmlight import write_svmlight

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for task, data in (("binary", make_binary(seed=seed)), ("multiclass", make_multiclass(seed=seed))):
        for split, X, y in (("train", data.X_train, data.y_train), ("test", data.X_test, data.y_test)):
            path = folder / f"{task}.{split}.svm"
            write_svmlight(path, X, y)
            out[f"{task}.{split}"] = path
    return out


#: Settings of the tagging task of ``cutplane demo``: 3 informative columns (their words
#: depend on the label with probability 0.5), 6 noise columns, 4 labels; about 6000 training
#: tokens, a few seconds per training run.
DEMO_TAGGING = dict(n_train=600, n_test=300, length=15, n_labels=4, n_informative=3, n_noise=6, signal=0.5, vocab=40)


def make_demo_tagging(seed=0, **overrides):
    """The demo's tagging task: :func:`~problems.synthetic.make_tagging_task` with
    :data:`DEMO_TAGGING` (``overrides`` replace some of its settings, e.g. a smaller ``n_train``).

    Returns
    -------
    problems.synthetic.TaggingTask
    """
    from problems.synthetic import make_tagging_task

    unknown = set(overrides) - set(DEMO_TAGGING)
    if unknown:
        raise InputError(f"unknown setting(s) {sorted(unknown)}; accepted: {sorted(DEMO_TAGGING)}", field="overrides")
    return make_tagging_task(**{**DEMO_TAGGING, **overrides}, seed=seed)


def write_tagging_files(task, folder):
    """Write ``train.txt``, ``test.txt`` (CoNLL columns, label last) and ``templates.txt``.

    These are the inputs of ``cutplane train --task sequence`` and ``cutplane compare``.

    Parameters
    ----------
    task : problems.synthetic.TaggingTask
    folder : str or os.PathLike
        Created when missing.

    Returns
    -------
    dict of str to pathlib.Path
        Keys ``"train"``, ``"test"``, ``"templates"``.
    """
    from problems.io.conll import write_columns

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {"train": folder / "train.txt", "test": folder / "test.txt", "templates": folder / "templates.txt"}
    for split, X, y in (("train", task.X_train, task.y_train), ("test", task.X_test, task.y_test)):
        write_columns(out[split], [[tuple(row) + (lab,) for row, lab in zip(x, ys)] for x, ys in zip(X, y)])
    out["templates"].write_text(task.templates)
    return out
