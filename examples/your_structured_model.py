"""Your structured model in 30 lines: ordinal regression, trained by every solver with a certificate.

A structured model is four things (:class:`oracles.structured.StructuredModel`): the length ``dim``
of its joint feature ``Phi(x, y)``, the joint feature itself, the prediction
``argmax_y <w, Phi(x, y)>`` and the loss-augmented argmax ``argmax_y Delta(y_i, y) + <w, Phi(x, y)>``
(the most violated output); the loss ``Delta`` has a default (Hamming for arrays, 0/1 otherwise)
that a model may replace. :class:`OrdinalModel` is ordinal regression as a structured model: the
classes ``0 .. K-1`` are ordered and a mistake costs its distance ``|y - y_hat|``; the joint feature
copies ``x`` into the block of class ``y``, and both argmax score the ``K`` classes at once. Its
``groups`` put the weights of one input feature (over all classes) in one group, so the ``"mtl"``
regulariser can switch uninformative features off.

:func:`train` fits it with :class:`problems.StructuredSVM` and each solver: BMRM, LS-BMRM, the n-slack
method, BMRM with the oracle on two threads (all certified: objective, lower bound, gap on
``F = Omega(w) + C R(w)``), SPOM (the online baseline, no certificate: its objective can only be
above the certified lower bound) and MTL^struct's block norm. The script prints a row per run.

Run ``python examples/your_structured_model.py`` from the repository root.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from oracles.structured import StructuredModel


class OrdinalModel(StructuredModel):
    """Ordered classes ``0 .. n_classes - 1``; ``x`` an ndarray of shape (n_features,), ``y`` an int."""

    def __init__(self, n_features, n_classes):
        self.n_features, self.n_classes = n_features, n_classes
        self.dim = n_classes * n_features
        self.groups = np.tile(np.arange(n_features), n_classes)  # one group per input feature

    def joint_feature(self, x, y):
        phi = np.zeros((self.n_classes, self.n_features))
        phi[y] = x  # x copied into the block of class y
        return phi.ravel()

    def scores(self, x, w):
        return w.reshape(self.n_classes, self.n_features) @ x  # <w, Phi(x, y)> for every y

    def argmax(self, x, w):
        return int(np.argmax(self.scores(x, w)))

    def loss(self, y, y_hat):
        return float(abs(y - y_hat))

    def loss_augmented_argmax(self, x, y, w):
        return int(np.argmax(self.scores(x, w) + np.abs(np.arange(self.n_classes) - y)))


def make_data(n_samples=300, n_features=8, n_informative=3, n_classes=5, seed=0):
    """``(X, y)``: a latent score from the first ``n_informative`` features (the others are noise)
    cut into ``n_classes`` ordered classes; the last feature is a constant 1."""
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.standard_normal((n_samples, n_features - 1)), np.ones((n_samples, 1))])
    z = X[:, :n_informative] @ rng.standard_normal(n_informative) + 0.3 * rng.standard_normal(n_samples)
    y = np.searchsorted(np.quantile(z, np.linspace(0, 1, n_classes + 1)[1:-1]), z)
    return list(X), [int(v) for v in y]


def train(X, y, C=10.0, eps=0.01):
    """The model trained by each solver: ``{name: fitted StructuredSVM}``."""
    from problems import StructuredSVM
    from problems.solvers import SPOM, CuttingPlane

    model = OrdinalModel(n_features=len(X[0]), n_classes=max(y) + 1)
    solvers = {
        "BMRM": dict(solver=CuttingPlane(method="bmrm", eps=eps)),
        "LS-BMRM": dict(solver=CuttingPlane(method="ls-bmrm", eps=eps)),
        "n-slack": dict(solver=CuttingPlane(method="n-slack", eps=eps)),
        "BMRM, 2 threads": dict(solver=CuttingPlane(method="bmrm", eps=eps, executor="threads", n_workers=2)),
        "SPOM (online)": dict(solver=SPOM(epochs=30)),
        "MTL^struct": dict(solver=CuttingPlane(eps=eps), regularizer="mtl"),
    }
    return {name: StructuredSVM(model, C=C, **kw).fit(X, y) for name, kw in solvers.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-samples", type=int, default=300, dest="n_samples")
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--eps", type=float, default=0.01, help="certified tolerance on F")
    args = parser.parse_args(argv)
    X, y = make_data(args.n_samples)
    fits = train(X, y, C=args.C, eps=args.eps)
    sys.stdout.write(f"{'solver':16s} {'objective F':>12s} {'lower bound':>12s} {'gap':>9s} {'score':>6s}\n")
    for name, svm in fits.items():
        lower = "-" if svm.lower_bound_ is None else f"{svm.lower_bound_:12.6f}"
        gap = "-" if svm.gap_ is None else f"{svm.gap_:9.2e}"
        sys.stdout.write(f"{name:16s} {svm.objective_:12.6f} {lower:>12s} {gap:>9s} {svm.score(X, y):6.3f}\n")
    mtl = fits["MTL^struct"]
    sys.stdout.write(f"MTL^struct feature weights mu: {np.round(list(mtl.template_weights_.values()), 3)}\n")
    return fits


if __name__ == "__main__":
    main()
