"""Multiple kernel learning: the :class:`MKL` estimator, its wrapper solver, the base kernels.

``MKL(kernels, C=..., solver=CuttingPlane(method="kelley", eps=...))`` (Kelley's cutting
planes, the default) or ``solver=Wrapper(method="gauss-seidel" | "simplemkl", ...)``; the
kernels (:mod:`problems.mkl.kernels`) with their PSD check (:mod:`problems.mkl.psd`); the
wrapper loop :func:`~problems.mkl.wrappers.wrapper_mkl` and its kernel-weight updates
(:mod:`problems.mkl.steps`); kernelised SPOM on Gram matrices (:mod:`problems.mkl.kernel_spom`);
the OCR chain features of SPOM's experiments (:mod:`problems.mkl.ocr_chain`).
"""

from problems.mkl.estimator import MKL
from problems.mkl.kernels import B1SplineKernel, GaussianKernel, LinearKernel, PolynomialKernel
from problems.mkl.wrappers import Wrapper

__all__ = ["MKL", "Wrapper", "LinearKernel", "PolynomialKernel", "GaussianKernel", "B1SplineKernel"]

_REMOVED = {
    "KelleyMKL": 'MKL(kernels, ..., solver=CuttingPlane(method="kelley", eps=..., max_iter=...))',
    "GaussSeidelMKL": 'MKL(kernels, ..., solver=Wrapper(method="gauss-seidel", eps=..., max_iter=...))',
    "SimpleMKL": 'MKL(kernels, ..., solver=Wrapper(method="simplemkl", eps=..., max_iter=...))',
}


def __getattr__(name):
    if name in _REMOVED:
        raise AttributeError(
            f"problems.mkl.{name} was replaced by {_REMOVED[name]} "
            "(CuttingPlane from problems.solvers; see CHANGELOG.md)"
        )
    raise AttributeError(f"module 'problems.mkl' has no attribute {name!r}")
