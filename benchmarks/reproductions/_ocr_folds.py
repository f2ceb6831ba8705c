"""Per-fold JSON records of ``python -m benchmarks.reproductions.ocr_chain_mkl`` and their statistics over folds.

One training run on one fold is stored as a JSON record (settings, data sizes and, per model and
solver, the fits at every C, the chosen C, the test accuracy and the per-character correctness on
the test words, bit-packed). Records of several folds are merged here without training: per model
and solver the mean and standard deviation of the test accuracy over folds, and MKL's paired
differences against the best single kernel (per fold on the same test characters, then over
folds). The page itself is written by :mod:`_ocr_page`.
"""

from __future__ import annotations

import base64
import json
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError

FORMAT = "cutplane/ocr_chain_mkl-fold/1"
#: SPOM Table 1 (upper part): test accuracy per character, mean over 10 folds (no pMKL row there)
PAPER = {"L": 0.718, "Q": 0.855, "G": 0.841, "A": 0.843, "MKL": 0.875}
TARGET = 0.875
SINGLE = ("L", "Q", "G")
SOLVER_NAMES = {"mtl": "MTL^struct (certified)", "spom": "SPOM"}
#: settings that must agree for records to be merged (the fold may differ)
MERGE_KEYS = (
    "C",
    "kernels",
    "solver",
    "model",
    "mtl_rel_eps",
    "mtl_time_limit",
    "epochs",
    "eta_grid",
    "tune_epochs",
    "tune_words",
    "n_components",
    "n_train_words",
    "n_val_words",
    "n_test_words",
    "pmkl_p",
)


def run_name(key):
    """``"mtl"`` -> MTL^struct (certified), ``"spom-last"`` -> SPOM (last model)."""
    return SOLVER_NAMES["mtl"] if key == "mtl" else f"SPOM ({key.split('-', 1)[1]} model)"


def p_text(p):
    """``4/3`` for 1.333..., ``2`` for 2.0."""
    return str(Fraction(float(p)).limit_denominator(100))


def pack_correct(correct) -> dict:
    """Bool vector -> ``{"n": n, "bits": base64 of np.packbits}``."""
    c = np.asarray(correct, dtype=bool).ravel()
    return {"n": int(c.size), "bits": base64.b64encode(np.packbits(c).tobytes()).decode("ascii")}


def unpack_correct(d, path=None) -> np.ndarray:
    """Inverse of :func:`pack_correct`: bool ndarray of shape (n,)."""
    try:
        n = int(d["n"])
        raw = np.frombuffer(base64.b64decode(d["bits"], validate=True), dtype=np.uint8)
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"bad per-character correctness record: {e}", path=path, field="correct") from None
    if raw.size != (n + 7) // 8:
        raise InputError(
            f"correctness bits hold {raw.size} bytes, expected {(n + 7) // 8} for n = {n}", path=path, field="correct"
        )
    return np.unpackbits(raw, count=n).astype(bool)


def paired_difference(correct_a, correct_b):
    """Mean of ``correct_a - correct_b`` over the same characters and its standard error."""
    d = np.asarray(correct_a, dtype=float) - np.asarray(correct_b, dtype=float)
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")


def mean_std(x):
    """Mean and sample standard deviation (ddof = 1; nan for a single value)."""
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(x.std(ddof=1)) if x.size > 1 else float("nan")


# ---------------------------------------------------------------------------------------- records
def write_record(record, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n")


def _check_record(rec, path):
    if not isinstance(rec, dict) or rec.get("format") != FORMAT:
        got = rec.get("format") if isinstance(rec, dict) else type(rec).__name__
        raise InputError(
            f"not a record of benchmarks.reproductions.ocr_chain_mkl (format {got!r}, expected {FORMAT!r})",
            path=path,
            field="format",
        )
    for k in ("fold", "settings", "rows", "train", "val", "test"):
        if k not in rec:
            raise InputError(f"missing key {k!r}", path=path, field=k)
    n_test = rec["test"]["chars"]
    for i, r in enumerate(rec["rows"]):
        for k in ("key", "label", "solver", "chosen", "grid", "test", "correct"):
            if k not in r:
                raise InputError(f"row {i}: missing key {k!r}", path=path, field=f"rows[{i}].{k}")
        c = unpack_correct(r["correct"], path)
        if c.size != n_test or not np.isclose(c.mean(), r["test"]):
            raise InputError(
                f"row {i} ({r['key']}, {r['solver']}): correctness vector ({c.size} characters, "
                f"mean {c.mean():.6f}) does not match the test set ({n_test}) / accuracy "
                f"({r['test']:.6f})",
                path=path,
                field=f"rows[{i}].correct",
            )
        if not 0 <= r["chosen"] < len(r["grid"]):
            raise InputError(
                f"row {i}: chosen index {r['chosen']} outside the grid", path=path, field=f"rows[{i}].chosen"
            )


def load_runs(paths) -> list:
    """Read fold records, check they can be merged (distinct folds, same settings), sorted by fold.

    Each record gets ``"path"`` (where it was read from).
    """
    runs = []
    for p in paths:
        p = Path(p)
        try:
            rec = json.loads(p.read_text())
        except OSError as e:
            raise InputError(f"cannot read the record: {e.strerror}", path=str(p)) from None
        except json.JSONDecodeError as e:
            raise InputError(f"not JSON: {e.msg}", path=str(p), line=e.lineno) from None
        _check_record(rec, str(p))
        rec["path"] = str(p)
        runs.append(rec)
    if not runs:
        raise InputError("no record to render", field="render")
    seen = {}
    for r in runs:
        if r["fold"] in seen:
            raise InputError(
                f"fold {r['fold']} appears twice (also in {seen[r['fold']]})", path=r["path"], field="fold"
            )
        seen[r["fold"]] = r["path"]
        for k in MERGE_KEYS:
            if r["settings"].get(k) != runs[0]["settings"].get(k):
                raise InputError(
                    f"setting {k} = {r['settings'].get(k)!r} differs from {runs[0]['path']} "
                    f"({runs[0]['settings'].get(k)!r}): runs with different settings are not merged",
                    path=r["path"],
                    field=f"settings.{k}",
                )
    return sorted(runs, key=lambda r: r["fold"])


# ------------------------------------------------------------------------------------ statistics
class ModelSummary(NamedTuple):
    """One (model, solver) over the folds run."""

    key: str
    label: str
    solver: str
    folds: tuple
    tests: np.ndarray  # (n_folds,) test accuracy per fold
    chosen: list  # (n_folds,) the chosen fit (dict) per fold
    beta: np.ndarray | None  # (n_folds, n_groups) group-norm shares, names in beta_names
    beta_names: tuple

    @property
    def mean(self):
        return mean_std(self.tests)[0]

    @property
    def std(self):
        return mean_std(self.tests)[1]


class Paired(NamedTuple):
    """Accuracy of model ``a`` minus model ``b`` (same solver), per fold on the same characters."""

    solver: str
    a: str
    b: str
    folds: tuple
    diffs: np.ndarray  # (n_folds,)
    ses: np.ndarray  # (n_folds,) standard error of each fold's paired difference

    @property
    def mean(self):
        return mean_std(self.diffs)[0]

    @property
    def std(self):
        return mean_std(self.diffs)[1]

    @property
    def n_ahead(self):
        return int(np.sum(self.diffs > 0))


def _row(run, key, solver):
    for r in run["rows"]:
        if r["key"] == key and r["solver"] == solver:
            return r
    raise InputError(f"no row ({key}, {solver}) in fold {run['fold']}", path=run.get("path"), field="rows")


def summaries(runs) -> dict:
    """``{(key, solver): ModelSummary}`` in the order of the first record's rows."""
    out = {}
    for r0 in runs[0]["rows"]:
        key, solver = r0["key"], r0["solver"]
        rows = [_row(run, key, solver) for run in runs]
        beta = None
        if all(r.get("beta") for r in rows):
            beta = np.array([[r["beta"][n] for n in r0["beta"]] for r in rows], dtype=float)
        out[key, solver] = ModelSummary(
            key,
            r0["label"],
            solver,
            tuple(run["fold"] for run in runs),
            np.array([r["test"] for r in rows], dtype=float),
            [r["grid"][r["chosen"]] for r in rows],
            beta,
            tuple(r0["beta"]) if beta is not None else (),
        )
    return out


def paired(runs, solver, a, b) -> Paired:
    """Per fold: mean and standard error of ``correct_a - correct_b`` on that fold's test characters."""
    d, s = [], []
    for run in runs:
        m, se = paired_difference(
            unpack_correct(_row(run, a, solver)["correct"]), unpack_correct(_row(run, b, solver)["correct"])
        )
        d.append(m)
        s.append(se)
    return Paired(solver, a, b, tuple(run["fold"] for run in runs), np.array(d), np.array(s))


def best_single(summ, solver, candidates=SINGLE):
    """The single kernel of highest mean test accuracy over folds (a choice fixed across folds)."""
    keys = [k for k in candidates if (k, solver) in summ]
    return max(keys, key=lambda k: summ[k, solver].mean) if keys else None


def grid_edges(runs):
    """``(fold, key, solver, C, "smallest" | "largest")`` for each chosen C at an end of a grid of >= 2 values."""
    out = []
    for run in runs:
        for r in run["rows"]:
            Cs = [g["C"] for g in r["grid"]]
            C = r["grid"][r["chosen"]]["C"]
            if len(Cs) > 1 and C in (min(Cs), max(Cs)):
                out.append((run["fold"], r["key"], r["solver"], C, "largest" if C == max(Cs) else "smallest"))
    return out


def not_converged(runs):
    """``(fold, key, C, status, gap, relative gap, chosen)`` for every MTL fit without a certified gap."""
    out = []
    for run in runs:
        for r in run["rows"]:
            if r["solver"] != "mtl":
                continue
            for i, g in enumerate(r["grid"]):
                if g["status"] != "converged":
                    gap = g["objective"] - g["lower_bound"]
                    out.append(
                        (
                            run["fold"],
                            r["key"],
                            g["C"],
                            g["status"],
                            gap,
                            gap / max(abs(g["lower_bound"]), 1e-300),
                            i == r["chosen"],
                        )
                    )
    return out
