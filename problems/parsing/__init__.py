"""Arc-factored dependency parsing: the parser, its decoder choice and its arc features."""

from problems.parsing.parser import DependencyParser, TreeDecoder

__all__ = ["DependencyParser", "TreeDecoder"]
