"""LS-BMRM with the exact piecewise-linear search reaches BMRM's certified optimum on every estimator whose
risk is piecewise linear but not of form (16): RankSVM, PerfSVM (each measure), OrdinalRegressor,
LinearRegressor with an intercept (absolute, quantile, epsilon-insensitive) and NoveltySVM."""

import numpy as np
import pytest

import cutplane.linesearch as linesearch
from problems import LinearRegressor, NoveltySVM, OrdinalRegressor, PerfSVM, RankSVM
from problems.solvers import CuttingPlane

EPS = 1e-6


def _data(seed, n=300, d=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n)
    return X, y, rng.integers(0, 6, n)


CASES = {
    "rank": (lambda s: RankSVM(C=10.0, solver=s), lambda X, y, q: ((X, np.digitize(y, [-1, 0, 1])), {"qid": q})),
    "roc_auc": (lambda s: PerfSVM(C=10.0, solver=s), lambda X, y, q: ((X, np.where(y > 0, 1, -1)), {})),
    "f1": (lambda s: PerfSVM(measure="f1", C=10.0, solver=s), lambda X, y, q: ((X, np.where(y > 0, 1, -1)), {})),
    "precision_at_k": (
        lambda s: PerfSVM(measure="precision_at_k", k=20, C=10.0, solver=s),
        lambda X, y, q: ((X, np.where(y > 0, 1, -1)), {}),
    ),
    "ordinal": (lambda s: OrdinalRegressor(C=10.0, solver=s), lambda X, y, q: ((X, np.digitize(y, [-1, 0, 1])), {})),
    "absolute": (lambda s: LinearRegressor(loss="absolute", C=10.0, solver=s), lambda X, y, q: ((X, y + 3), {})),
    "quantile": (
        lambda s: LinearRegressor(loss="quantile", quantile=0.3, C=10.0, solver=s),
        lambda X, y, q: ((X, y + 3), {}),
    ),
    "epsilon_insensitive": (
        lambda s: LinearRegressor(loss="epsilon_insensitive", epsilon=0.5, C=10.0, solver=s),
        lambda X, y, q: ((X, y + 3), {}),
    ),
    "novelty": (lambda s: NoveltySVM(nu=0.2, solver=s), lambda X, y, q: ((X + 1.0,), {})),
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(CASES))
def test_ls_bmrm_reaches_the_bmrm_optimum_by_the_exact_search(name, seed, monkeypatch):
    make, data = CASES[name]
    args, kwargs = data(*_data(seed))
    calls = []
    search = linesearch.piecewise_linear_search

    def spy(*a, **kw):
        res = search(*a, **kw)
        calls.append(res.converged)
        return res

    bmrm = make(CuttingPlane(eps=EPS, method="bmrm")).fit(*args, **kwargs)
    monkeypatch.setattr(linesearch, "piecewise_linear_search", spy)
    ls = make(CuttingPlane(eps=EPS, method="ls-bmrm")).fit(*args, **kwargs)
    assert ls.gap_ <= EPS and bmrm.gap_ <= EPS
    # both certified: each one's interval holds the other's optimum
    assert ls.lower_bound_ <= bmrm.objective_ + 1e-12 and bmrm.lower_bound_ <= ls.objective_ + 1e-12
    assert ls.result_.n_line_searches > 0 and len(calls) == ls.result_.n_line_searches
    assert all(calls)  # every search located its piece within the budget
    assert ls.n_iter_ <= bmrm.n_iter_
