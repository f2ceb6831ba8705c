"""Exhaustive argmax on tiny instances, the reference of the oracles' tests."""
from .trees import MAX_WORDS, TreeArgmax, brute_force_tree, enumerate_trees  # noqa: F401  (trees)
