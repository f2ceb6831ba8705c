"""Small generated structured tasks that ship with the package (demo, tests, teaching).

:func:`make_tagging_task` draws label sequences from a Markov chain and token columns of
two kinds: *informative* columns whose words depend on the label (with noise), and *noise*
columns of words drawn independently of the labels. With one CRF++ template per column
(plus ``B``), a template-selecting learner should keep the informative templates and drop
the noise ones (the point of Mao and Tsang 2013).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["TaggingTask", "make_tagging_task"]


class TaggingTask(NamedTuple):
    """A generated sequence-labelling task.

    Attributes
    ----------
    X_train, X_test : list of list of tuple of str
        Sentences: per token, the input columns.
    y_train, y_test : list of list of str
        Label sequences.
    templates : str
        CRF++ templates: ``U0j:%x[0,j]`` per column, ``U1j:%x[-1,j]`` for informative
        columns, and ``B``.
    informative : list of str
        Names of the templates built on informative columns.
    noise : list of str
        Names of the templates built on noise columns.
    """

    X_train: list
    y_train: list
    X_test: list
    y_test: list
    templates: str
    informative: list
    noise: list


def _draw(rng, n, length, n_labels, n_informative, n_noise, signal, vocab):
    trans = rng.dirichlet(np.full(n_labels, 0.5), size=n_labels)
    X, Y = [], []
    for _ in range(n):
        T = int(rng.integers(max(2, length // 2), length + 1))
        y = np.empty(T, dtype=int)
        y[0] = rng.integers(n_labels)
        for t in range(1, T):
            y[t] = rng.choice(n_labels, p=trans[y[t - 1]])
        cols = []
        for j in range(n_informative):
            keep = rng.random(T) < signal
            words = np.where(keep, y * 3 + rng.integers(0, 3, T), n_labels * 3 + rng.integers(0, vocab, T))
            cols.append([f"i{j}w{k}" for k in words])
        for j in range(n_noise):
            cols.append([f"n{j}w{k}" for k in rng.integers(0, vocab, T)])
        X.append([tuple(c[t] for c in cols) for t in range(T)])
        Y.append([f"L{k}" for k in y])
    return X, Y


def make_tagging_task(
    *, n_train=200, n_test=100, length=12, n_labels=4, n_informative=2, n_noise=4, signal=0.7, vocab=30, seed=0
) -> TaggingTask:
    """Generate a chain tagging task with informative and noise columns.

    Parameters
    ----------
    n_train, n_test : int
        Number of sentences.
    length : int
        Maximum sentence length (lengths are uniform in ``[length // 2, length]``).
    n_labels : int
    n_informative, n_noise : int
        Columns whose words depend on the label / do not.
    signal : float
        Probability that an informative word is drawn from the label's own words.
    vocab : int
        Size of the label-independent vocabulary of every column.
    seed : int or numpy Generator
    """
    for name, v in (("n_train", n_train), ("n_test", n_test), ("length", length), ("n_labels", n_labels)):
        if int(v) < 1:
            raise InputError(f"{name} must be >= 1, got {v}", field=name)
    if not 0.0 <= signal <= 1.0:
        raise InputError(f"signal must be in [0, 1], got {signal}", field="signal")
    rng = np.random.default_rng(seed)
    X, Y = _draw(
        rng, n_train + n_test, int(length), int(n_labels), int(n_informative), int(n_noise), float(signal), int(vocab)
    )
    lines: list[str] = []
    informative: list[str] = []
    noise: list[str] = []
    for j in range(n_informative + n_noise):
        name = f"U0{j}"
        lines.append(f"{name}:%x[0,{j}]")
        (informative if j < n_informative else noise).append(name)
    for j in range(n_informative):
        lines.append(f"U1{j}:%x[-1,{j}]")
        informative.append(f"U1{j}")
    lines.append("B")
    return TaggingTask(X[:n_train], Y[:n_train], X[n_train:], Y[n_train:], "\n".join(lines) + "\n", informative, noise)
