"""The QCQP reduced problem of ``MixedNorm(groups, p=1)`` (MTL^struct, Mao and Tsang 2013, eq. 6-7).

- :mod:`~cutplane.reduced.qcqp.solver`: :class:`QCQPReducedSolver`, the reduced solver of the
  registry kind ``"mixed-norm-1"`` (group generation, backends, fallback);
- :mod:`~cutplane.reduced.qcqp.native`: the native primal-dual interior point
  (:func:`solve_qcqp_native`, reported as ``NATIVE-IPM``);
- :mod:`~cutplane.reduced.qcqp.direct`: the cone program through Clarabel's own API
  (:func:`solve_qcqp_direct`).
"""

from __future__ import annotations

from .direct import DIRECT_NAME, solve_qcqp_direct
from .native import QCQPNativeResult, solve_qcqp_native
from .solver import NATIVE_NAME, QCQPReducedSolver

__all__ = [
    "QCQPReducedSolver",
    "NATIVE_NAME",
    "solve_qcqp_native",
    "QCQPNativeResult",
    "solve_qcqp_direct",
    "DIRECT_NAME",
]
