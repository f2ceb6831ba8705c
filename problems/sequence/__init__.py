"""Sequence labelling: the tagger, CRF++ templates, the feature index, word segmentation."""

from problems.sequence.tagger import SequenceTagger, SequenceTaggerCV

__all__ = ["SequenceTagger", "SequenceTaggerCV"]
