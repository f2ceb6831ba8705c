"""Exhaustive search on tiny instances: the ground truth the tests compare the oracles against."""

from .sequences import all_sequences, sequence_argmax, sequence_score  # noqa: F401
from .trees import MAX_WORDS, TreeArgmax, brute_force_tree, enumerate_trees  # noqa: F401
