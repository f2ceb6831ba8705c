"""Any user's structured model: :class:`StructuredSVM` and :class:`StructuredSVMCV`.

A model written against :class:`oracles.structured.StructuredModel` trains with every solver
(:mod:`problems.solvers`), predicts, scores and saves as the built-in structured tasks do.
"""

from problems.structured.svm import MODEL_SCHEMA, StructuredSVM, StructuredSVMCV

__all__ = ["StructuredSVM", "StructuredSVMCV", "MODEL_SCHEMA"]
