"""Positive semidefiniteness check of kernel matrices.

:func:`check_psd` computes the extreme eigenvalues of a symmetric kernel matrix (dense or
sparse) and warns with :class:`NotPSDWarning` when the smallest is below ``-tol`` times the
largest; it returns a :class:`PSDReport`. :mod:`problems.mkl.kernels` re-exports all three names.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError

__all__ = ["check_psd", "PSDReport", "NotPSDWarning"]


class NotPSDWarning(UserWarning):
    """A kernel matrix has an eigenvalue below ``-tol`` times its largest one."""


class PSDReport(NamedTuple):
    """What :func:`check_psd` found.

    Attributes
    ----------
    min_eigenvalue, max_eigenvalue : float
        Extreme eigenvalues of the (symmetric) matrix.
    is_psd : bool
        ``min_eigenvalue >= -tol * max(|max_eigenvalue|, 1e-300)``.
    """

    min_eigenvalue: float
    max_eigenvalue: float
    is_psd: bool


def check_psd(K, tol=1e-8, *, warn=True, name="K"):
    """Check that a kernel matrix is PSD within ``tol`` (relative to its largest eigenvalue).

    Parameters
    ----------
    K : ndarray or sparse matrix of shape (n, n)
        Symmetric; asymmetry beyond ``tol`` raises :class:`InputError`.
    tol : float, default=1e-8
    warn : bool, default=True
        Issue :class:`NotPSDWarning` with the most negative eigenvalue when not PSD.
    name : str
        Used in messages.

    Returns
    -------
    PSDReport

    Notes
    -----
    Up to n = 2000 all eigenvalues are computed; larger matrices use ARPACK for the two
    extreme ones.
    """
    if not sp.issparse(K):
        K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise InputError(f"a kernel matrix must be square, got shape {K.shape}", field=name)
    data = K.data if sp.issparse(K) else K
    if not np.isfinite(data).all():
        raise InputError("contains NaN or inf", field=name)
    n = K.shape[0]
    if n == 0:
        return PSDReport(0.0, 0.0, True)
    asym = abs(K - K.T).max()
    scale = abs(K).max()
    if asym > tol * max(scale, 1e-300):
        raise InputError(f"not symmetric (max |K - K^T| = {asym:.3g})", field=name)
    if n <= 2000:
        import scipy.linalg

        w = scipy.linalg.eigvalsh(K.toarray() if sp.issparse(K) else K)
        lo, hi = float(w[0]), float(w[-1])
    else:
        from scipy.sparse.linalg import ArpackNoConvergence, eigsh

        ext = []
        for which in ("SA", "LA"):
            try:
                ext.append(float(eigsh(K, k=1, which=which, tol=1e-6, return_eigenvectors=False)[0]))
            except ArpackNoConvergence as exc:  # an estimate is still informative
                ext.append(float(exc.eigenvalues[0]) if len(exc.eigenvalues) else math.nan)
        lo, hi = ext
    ok = lo >= -tol * max(abs(hi), 1e-300)
    if not ok and warn:
        warnings.warn(
            f"{name} is not positive semidefinite: most negative eigenvalue {lo:.6g} "
            f"(largest {hi:.6g}, tolerance {tol:g} relative)",
            NotPSDWarning,
            stacklevel=2,
        )
    return PSDReport(lo, hi, bool(ok))
