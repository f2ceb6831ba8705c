"""Arc-factored dependency parsing: the parser, its decoder choice and its arc features."""

from problems.parsing.parser import DependencyParser, DependencyParserCV, TreeDecoder

__all__ = ["DependencyParser", "DependencyParserCV", "TreeDecoder"]
