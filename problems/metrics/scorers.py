"""Scorers for scikit-learn's model selection: ``scoring=`` of ``GridSearchCV``, ``cross_val_score``.

scikit-learn's named scorers (``"f1_macro"``, ``"accuracy"``) expect one label per sample; a
tagger's ``y`` is a list of label sequences, so they fail on every fold and the search reports
``nan``. A scorer here is a callable ``scorer(estimator, X, y) -> float`` (scikit-learn's
scorer protocol): it predicts ``X`` with the fitted estimator and scores the predicted sequences
against ``y``, as a fraction in [0, 1], greater is better, like every scikit-learn score.

    >>> from sklearn.model_selection import GridSearchCV
    >>> from problems.metrics import chunk_f1_scorer
    >>> search = GridSearchCV(SequenceTagger(templates), {"C": [100, 1000]}, scoring=chunk_f1_scorer)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChunkF1Scorer", "chunk_f1_scorer"]


@dataclass(frozen=True)
class ChunkF1Scorer:
    """Chunk F1 of a tagger's predictions as a scikit-learn scorer (a fraction in [0, 1]).

    ``ChunkF1Scorer()(estimator, X, y)`` is ``chunk_f1(y, estimator.predict(X)).f1 / 100``
    (:func:`problems.metrics.chunking.chunk_f1`: conlleval's chunks for IOB1 / IOB2 / IOE tags,
    the scheme's own chunks for IOBES tags). A tag set without chunks (no ``B-X`` / ``I-X`` ...
    tags) scores 0; use the estimator's ``score`` (token accuracy) for those.

    Parameters
    ----------
    scheme : {"auto", "conlleval", "iobes"}, default="auto"
        How tags make chunks (:func:`~problems.metrics.chunking.chunk_f1`).

    Notes
    -----
    Chunks are counted over all the sentences of ``X`` together (micro F1, as conlleval), so
    the score of a fold is not the mean of its sentences' scores.
    """

    scheme: str = "auto"

    def __call__(self, estimator, X, y) -> float:
        """Chunk F1 (fraction) of ``estimator.predict(X)`` against the label sequences ``y``.

        Parameters
        ----------
        estimator : fitted tagger
            Anything whose ``predict(X)`` returns one label sequence per sentence.
        X : list of sentences
        y : list of list of str
            The gold label sequences, one per sentence of ``X``.

        Returns
        -------
        float
        """
        from problems.metrics.chunking import chunk_f1

        return chunk_f1(y, estimator.predict(X), scheme=self.scheme).f1 / 100.0


#: Chunk F1 (a fraction) with the scheme detected from the tags: give it as ``scoring=``.
chunk_f1_scorer = ChunkF1Scorer()
