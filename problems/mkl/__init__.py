"""Multiple kernel learning: the estimators, the base kernels and their PSD checks."""
from problems.mkl.kelley import KelleyMKL
from problems.mkl.wrappers import GaussSeidelMKL, SimpleMKL

__all__ = ["KelleyMKL", "GaussSeidelMKL", "SimpleMKL"]
