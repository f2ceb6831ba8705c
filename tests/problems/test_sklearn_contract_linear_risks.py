"""scikit-learn's estimator contract for the issue-40 estimators (as ``test_sklearn_contract.py``).

Every check of :func:`sklearn.utils.estimator_checks.check_estimator` runs, each a test case, on
``PerfSVM`` (each measure), ``LinearRegressor`` (a residual loss and the Poisson loss, whose
``positive_only`` target tag makes the checks draw targets >= 0), ``OrdinalRegressor``,
``LinearSVM`` with the smooth losses and ``RankSVM``. ``RankSVM.fit(X, y, qid=None)`` is checked
with its default, one query: the checks never pass a ``qid``, so the grouping by query is
tested in ``test_linear_risks.py``, not here.

Expected failures, with the reason, where the check cannot apply (``EXPECTED_FAILED_CHECKS``):
``LinearSVM(loss="logistic")``'s and ``LinearSVM(loss="squared_hinge")``'s
``check_class_weight_classifiers`` for the reason the hinge fails it (no intercept by default;
see ``test_sklearn_contract.py``). The squared hinge used to pass it only because its run on the
check's three blobs stopped at ``max_iter`` far from the optimum (certified gap 24 against
``eps``) at a model that predicts class 0 everywhere; since the engine prunes idle cuts after 15
iterations it converges (84 iterations), and the certified optimum scores 0.64 where the check
asks 0.87, as the hinge's does.
"""

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from problems import LinearRegressor, LinearSVM, OrdinalRegressor, PerfSVM, RankSVM

ESTIMATORS = [
    PerfSVM(),
    PerfSVM(measure="f1"),
    PerfSVM(measure="precision_at_k", k=5),
    LinearRegressor(loss="absolute"),
    LinearRegressor(loss="poisson"),
    OrdinalRegressor(),
    LinearSVM(loss="logistic"),
    LinearSVM(loss="squared_hinge"),
    RankSVM(),
]

NO_INTERCEPT = "no intercept by default: the check's blobs are not centred (as for the hinge)"


def _expected(est):
    if isinstance(est, LinearSVM) and est.loss in ("logistic", "squared_hinge"):
        return {"check_class_weight_classifiers": NO_INTERCEPT}
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected)
def test_check_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the checks' tiny problems may stop at max_iter
        check(estimator)
