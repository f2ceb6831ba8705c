"""``cutplane demo``: train on small generated data and print a table of certified results.

Two problems from :mod:`problems.demo_data` (binary and 4-class, 2000 x 50, dense), each
trained by :class:`~problems.classification.LinearSVM` with BMRM at ``C = 100`` and
``eps = 1e-2`` on the scale of ``F`` (``F(0) = C``, so a relative tolerance of 1e-4).
"""
from __future__ import annotations

import json
from pathlib import Path

__all__ = ["run_demo", "DEMO_C", "DEMO_EPS"]

DEMO_C = 100.0
DEMO_EPS = 1e-2

_COLUMNS = ("task", "n_train", "n_features", "classes", "objective", "lower_bound", "gap",
            "iters", "train_acc", "test_acc", "time_s")


def _row(task, data, est):
    return {
        "task": task, "n_train": data.X_train.shape[0], "n_features": data.X_train.shape[1],
        "classes": len(est.classes_), "objective": f"{est.objective_:.6f}",
        "lower_bound": f"{est.lower_bound_:.6f}", "gap": f"{est.gap_:.2e}",
        "iters": est.n_iter_, "train_acc": f"{est.score(data.X_train, data.y_train):.4f}",
        "test_acc": f"{est.score(data.X_test, data.y_test):.4f}",
        "time_s": f"{est.result_.time_s:.2f}",
    }


def _table(rows):
    cells = [list(_COLUMNS)] + [[str(r[c]) for c in _COLUMNS] for r in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(_COLUMNS))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells) + "\n"


def run_demo(*, seed=0, out_dir=None, out):
    """Generate the data, train, write the table to the text stream ``out``; return 0.

    Parameters
    ----------
    seed : int
        Seed of the generated data.
    out_dir : path, optional
        When given, the SVMlight files, the models (``*.npz``) and the reports (``*.json``)
        are written there too.
    out : text stream
        Where the table goes (the CLI passes ``sys.stdout``).
    """
    from problems.classification import LinearSVM
    from problems.cli import svm_report
    from problems.demo_data import make_binary, make_multiclass, write_demo_files

    problems = (("binary", make_binary(seed=seed)), ("multiclass", make_multiclass(seed=seed)))
    if out_dir is not None:
        out_dir = Path(out_dir)
        write_demo_files(out_dir, seed=seed)
    rows = []
    for task, data in problems:
        est = LinearSVM(C=DEMO_C, eps=DEMO_EPS, method="bmrm").fit(data.X_train, data.y_train)
        rows.append(_row(task, data, est))
        if out_dir is not None:
            report = {"task": task, **svm_report(est)}
            est.save(out_dir / f"{task}.model.npz",
                     extra_meta={"task": task, "report": {k: v for k, v in report.items()
                                                          if k != "history"}})
            (out_dir / f"{task}.report.json").write_text(json.dumps(report, indent=2) + "\n")
    out.write(f"cutplane demo: linear SVMs by BMRM, C = {DEMO_C:g}, eps = {DEMO_EPS:g} "
              f"(F = 1/2||w||^2 + C * mean hinge (binary) or Crammer-Singer (multiclass) "
              f"loss; gap = certified bound on F(w) - min F)\n")
    out.write(_table(rows))
    return 0
