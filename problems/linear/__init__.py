"""Linear support vector machines (binary and Crammer-Singer multiclass)."""

from problems.linear.svm import LinearSVM

__all__ = ["LinearSVM"]
