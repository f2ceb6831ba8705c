"""The contracts of cutplane.protocols: declared capabilities, the reduced-solver registry,
runtime-checkable protocols for the package's oracles and solvers."""

import inspect

import numpy as np
import pytest

import cutplane
from cutplane import regularizers
from cutplane.cuts import Cut, ExampleSubgradient, OracleResult
from cutplane.exceptions import InputError
from cutplane.protocols import (
    REGULARIZER_CAPABILITIES,
    REGULARIZER_METHODS,
    ExampleOracle,
    LineSearchOracle,
    Oracle,
    ReducedSolver,
    Regularizer,
    RiskFloorOracle,
)
from cutplane.reduced.registry import (
    ReducedSolverEntry,
    make_reduced_solver,
    reduced_solvers_for,
    register_reduced_solver,
    registered_kinds,
)
from cutplane.regularizers import L1, L2, Box, MixedNorm, RegularizerBase, Simplex


def _regularizer_classes():
    return sorted(
        (
            c
            for c in vars(regularizers).values()
            if inspect.isclass(c) and issubclass(c, RegularizerBase) and c is not RegularizerBase
        ),
        key=lambda c: c.__name__,
    )


def _instances():
    groups = np.array([0, 0, 1, 1, 2])
    return [
        L2(),
        L1(),
        Simplex(5),
        Box(0.0, 1.0, dim=5),
        MixedNorm(groups, p=1.0),
        MixedNorm(groups, p=2.0),
        MixedNorm(groups, p=1.5),
        MixedNorm(groups, p=100.0),
    ]


def test_every_regularizer_class_declares_every_capability():
    classes = _regularizer_classes()
    assert {c.__name__ for c in classes} >= {"L2", "L1", "Simplex", "Box", "MixedNorm", "IndicatorSet"}
    for cls in classes:
        for name in REGULARIZER_CAPABILITIES:
            if name == "kind" and cls is MixedNorm:
                continue  # depends on p: set by __init__ (checked on the instances below)
            assert any(name in vars(k) or name in getattr(k, "__annotations__", {}) for k in cls.__mro__), (cls, name)
        for name in REGULARIZER_METHODS:
            assert callable(getattr(cls, name)), (cls, name)


@pytest.mark.parametrize("reg", _instances(), ids=repr)
def test_instances_satisfy_the_protocol_and_have_a_registered_solver(reg):
    assert isinstance(reg, Regularizer)
    for name in REGULARIZER_CAPABILITIES:
        assert hasattr(reg, name), name
    assert isinstance(reg.kind, str) and isinstance(reg.is_indicator, bool)
    assert isinstance(reg.self_conjugate, bool) and isinstance(reg.risk_floor_cut, bool)
    assert (reg.groups is None) == (reg.n_groups is None)
    assert reduced_solvers_for(reg.kind)
    solver = make_reduced_solver(reg)
    assert isinstance(solver, ReducedSolver)


def test_capability_values():
    assert L2().self_conjugate and not L2().risk_floor_cut and not L2().is_indicator
    assert L1().risk_floor_cut and not L1().self_conjugate and L1().groups is None
    assert Simplex(3).is_indicator and Box(0.0, 1.0, dim=2).is_indicator
    assert [MixedNorm([0, 1], p=p).kind for p in (1.0, 2.0, 3.0)] == ["mixed-norm-1", "mixed-norm-2", "mixed-norm-p"]
    assert [MixedNorm([0, 1], p=p).risk_floor_cut for p in (1.0, 2.0, 3.0)] == [True, False, True]


def test_registry_covers_every_kind_in_preference_order():
    kinds = {"l2", "l1", "indicator", "mixed-norm-1", "mixed-norm-2", "mixed-norm-p"}
    assert kinds <= registered_kinds()
    for kind in kinds:
        assert reduced_solvers_for(kind)
    from cutplane.reduced.lp import LPReducedSolver
    from cutplane.reduced.qcqp import QCQPReducedSolver
    from cutplane.reduced.qp import QPReducedSolver
    from cutplane.reduced.smooth_dual import SmoothDualReducedSolver

    groups = [0, 0, 1]
    assert type(make_reduced_solver(L2())) is QPReducedSolver
    assert type(make_reduced_solver(MixedNorm(groups, p=2.0))) is QPReducedSolver
    assert type(make_reduced_solver(L1())) is LPReducedSolver
    assert type(make_reduced_solver(Simplex(3))) is LPReducedSolver
    assert type(make_reduced_solver(MixedNorm(groups, p=1.0))) is QCQPReducedSolver
    assert type(make_reduced_solver(MixedNorm(groups, p=3.0))) is SmoothDualReducedSolver


def test_registry_refuses_an_unknown_kind_and_takes_new_entries():
    class Odd(L2):
        kind = "test-odd-kind"

    with pytest.raises(InputError, match="no reduced solver registered"):
        make_reduced_solver(Odd())
    made = []

    def factory(reg, backends=None, **options):
        made.append(reg)
        return make_reduced_solver(L2(), backends, **options)

    register_reduced_solver(ReducedSolverEntry("test-odd-unavailable", ("test-odd-kind",), factory, lambda: False))
    with pytest.raises(InputError, match="no available reduced solver"):
        make_reduced_solver(Odd())
    register_reduced_solver(ReducedSolverEntry("test-odd", ("test-odd-kind",), factory))
    reg = Odd()
    assert isinstance(make_reduced_solver(reg), ReducedSolver) and made == [reg]
    res = cutplane.minimize(_Quadratic(3), reg, 1.0, eps=1e-6)
    assert res.status == "converged" and len(made) == 2


class _Quadratic:
    """R(w) = max(0, 1 - w_0) + |w_1 - 1|: a max of affine pieces in R^dim."""

    risk_lower_bound = 0.0

    def __init__(self, dim):
        self.dim = dim

    def __call__(self, w):
        a = np.zeros(self.dim)
        v = max(0.0, 1.0 - w[0]) + abs(w[1] - 1.0)
        if w[0] < 1.0:
            a[0] = -1.0
        a[1] = 1.0 if w[1] >= 1.0 else -1.0
        return OracleResult(v, Cut(a, v - float(a @ w)))


def test_engine_refuses_a_regularizer_without_the_contract():
    class NoKind:
        def __call__(self, w):
            return 0.0

        def conjugate(self, v):
            return 0.0

        def grad_conjugate(self, v):
            return v

    with pytest.raises(InputError, match="kind") as err:
        cutplane.minimize(_Quadratic(2), NoKind(), 1.0)
    assert err.value.field == "regularizer"


def test_engine_takes_a_reduced_solver_object():
    calls = []
    inner = make_reduced_solver(L2())

    class Counting:
        def solve(self, ws, lam, warm_start=None):
            calls.append(ws.n_cuts)
            return inner.solve(ws, lam, warm_start=warm_start)

    res = cutplane.minimize(_Quadratic(2), L2(), 1.0, eps=1e-6, solver=Counting())
    assert res.status == "converged" and len(calls) == res.n_iter


def test_package_root_exports():
    assert cutplane.Oracle is Oracle and cutplane.Cut is Cut and cutplane.OracleResult is OracleResult


def test_oracles_of_the_package_satisfy_the_protocols():
    from oracles.linear import BinaryHinge

    X = np.random.default_rng(0).standard_normal((6, 3))
    y = np.array([1, -1, 1, -1, 1, 1])
    hinge = BinaryHinge(X, y)
    assert isinstance(hinge, Oracle) and isinstance(hinge, RiskFloorOracle)
    assert isinstance(hinge, LineSearchOracle)
    assert isinstance(_Quadratic(2), Oracle) and not isinstance(_Quadratic(2), LineSearchOracle)
    from oracles.function import FunctionOracle

    f = FunctionOracle(lambda w: (float(w @ w), 2 * w), dim=3)
    assert isinstance(f, Oracle)


def test_example_oracle_protocol():
    from cutplane.online.example_oracles import as_example_oracle

    class PerExample:
        n_samples, dim = 2, 3

        def example_support(self, i):
            return None

        def example_subgradient(self, i, w_support):
            return ExampleSubgradient(1.0, np.array([i]), np.array([1.0]))

    ex = PerExample()
    assert isinstance(ex, ExampleOracle) and as_example_oracle(ex) is ex
    assert not isinstance(_Quadratic(2), ExampleOracle)
