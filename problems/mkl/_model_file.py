"""Model files of :class:`problems.mkl.kelley.KelleyMKL` (moved here from that module).

``_save_kelley_mkl`` and ``_load_kelley_mkl`` are the bodies of :meth:`KelleyMKL.save`
and :meth:`KelleyMKL.load` (npz + JSON through :mod:`problems.model_io`, never pickle;
the format is described in :mod:`problems.mkl.kelley`).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError, ModelFormatError

_KERNEL_CLASSES = ("LinearKernel", "PolynomialKernel", "GaussianKernel", "B1SplineKernel")


def _save_kelley_mkl(est, path, extra_meta):
    """Write a fitted :class:`~problems.mkl.kelley.KelleyMKL` (checked fitted by the caller)."""
    from problems.model_io import save_model

    specs = None
    arrays = {"classes": np.asarray(est.classes_), "kernel_weights": est._betas,
              "dual_coef": est.dual_coef_, "support": est.support_.astype(np.int64),
              "intercept": est.intercept_, "inner_gaps": est.inner_gaps_}
    if est._callables:
        specs = []
        for k, kern in enumerate(est.kernels):
            name = type(kern).__name__
            if name not in _KERNEL_CLASSES or type(kern).__module__ != "problems.mkl.kernels":
                raise InputError(f"kernels[{k}] is a {name}: only the kernels of problems.mkl.kernels "
                                 f"({', '.join(_KERNEL_CLASSES)}) can be saved (by name and parameters)",
                                 field="kernels")
            specs.append({"name": name, "params": kern._params()})
        SV = est.support_vectors_
        if sp.issparse(SV):
            SV = SV.tocsr()
            arrays.update(sv_data=SV.data, sv_indices=SV.indices.astype(np.int64),
                          sv_indptr=SV.indptr.astype(np.int64), sv_shape=np.asarray(SV.shape, np.int64))
        else:
            arrays["support_vectors"] = np.asarray(SV, dtype=np.float64)
    params = {k: v for k, v in est.get_params().items() if k != "kernels"}
    meta = dict(extra_meta or {})
    meta.update({"estimator": type(est).__name__, "params": params, "kernels": specs,
                 "n_kernels": int(est._betas.shape[1]), "n_train": est.n_train_,
                 "n_features_in": getattr(est, "n_features_in_", None),
                 "shared": bool(np.ndim(est.kernel_weights_) == 1), "objective": est.objective_,
                 "lower_bound": est.lower_bound_, "gap": est.gap_, "n_iter": est.n_iter_})
    return save_model(path, arrays, meta)


def _load_kelley_mkl(cls, path):
    """Read a model written by :func:`_save_kelley_mkl` as an instance of ``cls``."""
    from problems.mkl import kernels as kernel_module
    from problems.model_io import load_model

    arrays, meta = load_model(path, estimator=cls.__name__)
    try:
        specs, K, n_train = meta["kernels"], int(meta["n_kernels"]), int(meta["n_train"])
        params = dict(meta["params"])
        kernels = None
        if specs is not None:
            if len(specs) != K:
                raise ModelFormatError(f"{len(specs)} kernel specs for {K} kernels", path=path, field="kernels")
            kernels = []
            for spec in specs:
                if spec["name"] not in _KERNEL_CLASSES:
                    raise ModelFormatError(f"unknown kernel {spec['name']!r}", path=path, field="kernels")
                kernels.append(getattr(kernel_module, spec["name"])(**spec["params"]))
        est = cls(kernels, **params)
        scalars = [float(meta[k]) for k in ("objective", "lower_bound", "gap")]
        n_iter, shared = int(meta["n_iter"]), bool(meta["shared"])
        n_features = meta["n_features_in"]
        betas = np.asarray(arrays["kernel_weights"], dtype=np.float64)
        dual, support = np.asarray(arrays["dual_coef"], np.float64), np.asarray(arrays["support"], np.int64)
        intercept, inner = np.asarray(arrays["intercept"], np.float64), np.asarray(arrays["inner_gaps"], np.float64)
        classes = arrays["classes"]
    except ModelFormatError:
        raise
    except (KeyError, TypeError, ValueError, InputError) as exc:
        raise ModelFormatError(f"model metadata is incomplete or malformed: {exc!r}", path=path) from None
    n_out = 1 if classes.shape[0] == 2 else classes.shape[0]
    for name, arr, shape in (("kernel_weights", betas, (n_out, K)), ("dual_coef", dual, (n_out, support.size)),
                             ("intercept", intercept, (n_out,)), ("inner_gaps", inner, (n_out,))):
        if arr.shape != shape:
            raise ModelFormatError(f"{name} has shape {arr.shape}, expected {shape}", path=path, field=name)
    if support.ndim != 1 or (support.size and (support.min() < 0 or support.max() >= n_train)):
        raise ModelFormatError(f"support indices outside 0..{n_train - 1}", path=path, field="support")
    est._callables = kernels is not None
    est.support_vectors_ = None
    if est._callables:
        if "support_vectors" in arrays:
            SV = np.asarray(arrays["support_vectors"], dtype=np.float64)
        elif "sv_data" in arrays:
            try:
                SV = sp.csr_matrix((arrays["sv_data"], arrays["sv_indices"], arrays["sv_indptr"]),
                                   shape=tuple(int(v) for v in arrays["sv_shape"]))
            except (KeyError, ValueError) as exc:
                raise ModelFormatError(f"bad sparse support vectors: {exc}", path=path,
                                       field="support_vectors") from None
        else:
            raise ModelFormatError("kernels are callables but no support vectors are stored", path=path,
                                   field="support_vectors")
        if SV.ndim != 2 or SV.shape[0] != support.size:
            raise ModelFormatError(f"support vectors of shape {SV.shape} for {support.size} support indices",
                                   path=path, field="support_vectors")
        est.support_vectors_ = SV
        est.n_features_in_ = int(n_features if n_features is not None else SV.shape[1])
    est.classes_ = classes
    est._betas = betas
    est.kernel_weights_ = betas[0].copy() if shared else betas
    est.dual_coef_, est.support_, est.intercept_, est.inner_gaps_ = dual, support, intercept, inner
    est.objective_, est.lower_bound_, est.gap_ = scalars
    est.n_iter_, est.n_train_ = n_iter, n_train
    return est
