"""Grid-CRF structural-SVM oracle: risk and cut against brute force, inexact cuts, training."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.map_oracle import GridCRFOracle


def make_data(seed, n=2, shape=(2, 3), n_states=3, n_features=2):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=shape + (n_features,)) for _ in range(n)]
    Y = [rng.integers(0, n_states, size=shape) for _ in range(n)]
    return X, Y


def phi_reference(x, y, n_states, pairwise, edge_classes):
    """Joint features by explicit loops over nodes and edges (independent of the oracle)."""
    rows, cols, d = x.shape
    n_classes = 2 if edge_classes == "hv" else 1
    phi_u = np.zeros((n_states, d))
    phi_p = np.zeros(n_classes) if pairwise == "potts" else np.zeros((n_classes, n_states, n_states))
    for r in range(rows):
        for c in range(cols):
            phi_u[y[r, c]] += x[r, c]
            for dr, dc, cls in ((0, 1, 0), (1, 0, 1 if edge_classes == "hv" else 0)):
                if r + dr < rows and c + dc < cols:
                    a, b = y[r, c], y[r + dr, c + dc]
                    if pairwise == "potts":
                        phi_p[cls] += a == b
                    else:
                        phi_p[cls, a, b] += 1
    return np.concatenate([phi_u.ravel(), phi_p.ravel()])


def brute_risk(X, Y, w, n_states, pairwise, edge_classes):
    """R(w) = mean_i max_y [Hamming(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>] by enumeration."""
    total = 0.0
    for x, y in zip(X, Y):
        phi_true = phi_reference(x, y, n_states, pairwise, edge_classes)
        best = -np.inf
        for lab in itertools.product(range(n_states), repeat=y.size):
            yy = np.array(lab).reshape(y.shape)
            val = np.count_nonzero(yy != y) + w @ (phi_reference(x, yy, n_states, pairwise, edge_classes) - phi_true)
            best = max(best, val)
        total += best
    return total / len(X)


@pytest.mark.parametrize("pairwise, edge_classes", [("potts", "hv"), ("full", "one"), ("full", "hv")])
def test_joint_feature_matches_reference(pairwise, edge_classes):
    X, Y = make_data(0)
    oracle = GridCRFOracle(X, Y, 3, pairwise=pairwise, edge_classes=edge_classes)
    for x, y in zip(X, Y):
        np.testing.assert_allclose(oracle.joint_feature(x, y), phi_reference(x, y, 3, pairwise, edge_classes))


@settings(max_examples=15)
@given(st.integers(0, 10_000), st.sampled_from([("potts", "hv"), ("full", "one")]))
def test_risk_and_cut_vs_brute_force(seed, model):
    pairwise, edge_classes = model
    X, Y = make_data(seed)
    oracle = GridCRFOracle(X, Y, 3, pairwise=pairwise, edge_classes=edge_classes)
    rng = np.random.default_rng(seed + 1)
    w = rng.normal(size=oracle.dim) * 2
    res = oracle(w)
    r_true = brute_risk(X, Y, w, 3, pairwise, edge_classes)
    assert res.value >= r_true - 1e-7
    at_w = res.cut.slope @ w + res.cut.offset
    assert at_w <= r_true + 1e-7
    if res.exact:
        assert res.value == pytest.approx(r_true, abs=1e-6)
        assert at_w == pytest.approx(res.value, abs=1e-9)
    expected_slope = np.mean(
        [
            phi_reference(x, yh, 3, pairwise, edge_classes) - phi_reference(x, y, 3, pairwise, edge_classes)
            for x, y, yh in zip(X, Y, res.argmax)
        ],
        axis=0,
    )
    np.testing.assert_allclose(res.cut.slope, expected_slope, atol=1e-12)
    w2 = rng.normal(size=oracle.dim) * 2  # a minorant everywhere
    assert res.cut.slope @ w2 + res.cut.offset <= brute_risk(X, Y, w2, 3, pairwise, edge_classes) + 1e-7


def test_inexact_when_relaxation_not_tight():
    """Plain diffusion (no cycles) on frustrated random tables: exact=False, value an upper bound."""
    rng = np.random.default_rng(3)
    X = [rng.normal(size=(2, 3, 1)) * 0.1]
    Y = [rng.integers(0, 3, size=(2, 3))]
    oracle = GridCRFOracle(X, Y, 3, pairwise="full", edge_classes="hv", map_options={"max_steps": 0})
    for _ in range(300):
        w = rng.normal(size=oracle.dim) * 3
        res = oracle(w)
        if res.exact:
            continue
        r_true = brute_risk(X, Y, w, 3, "full", "hv")
        assert res.value >= r_true - 1e-7
        assert res.cut.slope @ w + res.cut.offset <= r_true + 1e-7
        assert not oracle.last_tight[0]
        assert oracle.last_relaxation_gap > 0
        # with cycle tightening the same query becomes exact here (a 2 x 3 grid has two 4-cycles)
        tight = GridCRFOracle(X, Y, 3, pairwise="full", edge_classes="hv")(w)
        assert tight.exact and tight.value == pytest.approx(r_true, abs=1e-6)
        assert tight.value <= res.value + 1e-9
        break
    else:
        pytest.fail("no non-tight relaxation among the trials")


def test_training_with_engine():
    """A denoising task: labels are noisy-feature argmax; BMRM trains to a certified gap."""
    cutplane = pytest.importorskip("cutplane.engine")
    from cutplane.regularizers import L2

    rng = np.random.default_rng(0)
    X, Y = [], []
    for _ in range(4):
        y = (rng.random((4, 4)) < 0.5).astype(np.int64)
        y[:, 2:] = y[:, :2]  # some spatial structure
        x = np.stack([1.0 - y, y], axis=2) + rng.normal(scale=0.6, size=(4, 4, 2))
        X.append(x)
        Y.append(y)
    oracle = GridCRFOracle(X, Y, 2)
    res = cutplane.minimize(oracle, L2(), lam=0.1, eps=1e-3, max_iter=200)
    assert res.status == "converged" and res.exact
    assert res.gap <= 1e-3
    acc = np.mean([np.mean(p == y) for p, y in zip(oracle.predict(res.w), Y)])
    assert acc >= 0.8


@pytest.mark.parametrize(
    "case, field",
    [
        ("n_states", "n_states"),
        ("label_range", "Y"),
        ("shape", "Y"),
        ("nan", "X"),
        ("features", "X"),
        ("pairwise", "pairwise"),
    ],
)
def test_bad_input(case, field):
    X, Y = make_data(1)
    kwargs = {}
    n_states = 3
    if case == "n_states":
        n_states = 1
    elif case == "label_range":
        Y[0][0, 0] = 3
    elif case == "shape":
        Y[1] = Y[1].T
    elif case == "nan":
        X[0][0, 0, 0] = np.nan
    elif case == "features":
        X[1] = X[1][:, :, :1]
    elif case == "pairwise":
        kwargs["pairwise"] = "ising"
    with pytest.raises(InputError) as info:
        GridCRFOracle(X, Y, n_states, **kwargs)
    assert info.value.field == field


def test_bad_weight_shape():
    X, Y = make_data(2)
    oracle = GridCRFOracle(X, Y, 3)
    with pytest.raises(InputError, match="expected"):
        oracle(np.zeros(oracle.dim + 1))


def test_thread_executor_matches_serial():
    X, Y = make_data(4, n=5)
    w = np.random.default_rng(4).normal(size=GridCRFOracle(X, Y, 3).dim)
    serial = GridCRFOracle(X, Y, 3)(w)
    threaded = GridCRFOracle(X, Y, 3, executor="threads", n_workers=2)(w)
    assert threaded.value == pytest.approx(serial.value, abs=1e-12)
    np.testing.assert_allclose(threaded.cut.slope, serial.cut.slope)
    assert all(np.array_equal(a, b) for a, b in zip(threaded.argmax, serial.argmax))
