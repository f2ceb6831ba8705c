"""Arc-factored dependency parsing: the parser and its arc features."""
from problems.parsing.parser import DependencyParser

__all__ = ["DependencyParser"]
