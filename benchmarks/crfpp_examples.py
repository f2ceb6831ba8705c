"""CRF++'s four example folders: cutplane and CRFsuite on the same template features, side by side.

Given the ``example/`` folder of CRF++ (https://github.com/taku910/crfpp: ``chunking``,
``basenp``, ``JapaneseNE``, ``seg``, each with ``template``, ``train.data`` and ``test.data``),
every folder is read as it comes (``JapaneseNE`` in EUC-JP, the others UTF-8; the U+3000 tokens of
``seg`` are tokens, columns being split on spaces and tabs as CRF++ splits them) and trained by

- cutplane's :class:`~problems.sequence.tagger.SequenceTaggerCV` with its defaults (``Cs="auto"``:
  the regulariser's grid, chosen on 10% of the training sentences held out, then refitted on all
  of them; ``eps=0.1`` per point as the CLI), once with MTL^struct (``regularizer="mtl"``, the
  default) and once with the structural SVM (``"ssvm"``);
- CRFsuite (python-crfsuite, L-BFGS, L2) through :mod:`benchmarks.crfsuite_reference`, given as
  attributes the feature strings our expansion of the folder's ``U`` templates produces (the same
  strings, the same dictionary), with its own label transitions in the role of the ``B`` template:
  at its default ``c2 = 1`` and at ``c2 = 1 / (2 c)`` with ``c`` the ``-c`` of the folder's
  ``exec.sh`` (CRF++'s objective is ``c * NLL + ||w||^2 / 2``; CRFsuite's ``NLL + c2 ||w||^2``).

Both sides use the folder's feature cutoff (``-f`` of ``exec.sh``: 3 for ``JapaneseNE`` and
``seg``, else 1) as ``min_count``, so the feature dictionaries are the same. Scores on
``test.data``: token accuracy (percent) and, for the chunk tag sets, conlleval's chunk F1
(:mod:`problems.metrics`); test labels unseen in training count as errors on both sides.

Run from the repository root::

    python -m benchmarks.crfpp_examples /path/to/crfpp/example

which writes ``docs/results/crfpp_examples.md`` and ``.json`` (``--out`` to choose; ``--render``
writes the page again from the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

from benchmarks._timing import fixed
from benchmarks.crfsuite_reference import evaluate, train_crfsuite
from cutplane.exceptions import InputError

__all__ = ["EXAMPLES", "run_example", "page", "main"]

ROOT = Path(__file__).resolve().parent.parent

#: Per folder: encoding of its files, CRF++'s ``-f`` (feature cutoff) and ``-c`` from its ``exec.sh``.
EXAMPLES = {
    "chunking": {"encoding": "utf-8", "min_count": 1, "c": 4.0},
    "basenp": {"encoding": "utf-8", "min_count": 1, "c": 10.0},
    "JapaneseNE": {"encoding": "euc-jp", "min_count": 3, "c": 4.0},
    "seg": {"encoding": "utf-8", "min_count": 3, "c": 4.0},
}


def _read(folder: Path, encoding: str):
    from problems.io._open import open_text
    from problems.io.conll import read_crfpp

    with open_text(folder / "template", encoding) as fh:
        templates = fh.read()
    return (
        templates,
        read_crfpp(folder / "train.data", encoding=encoding),
        read_crfpp(folder / "test.data", encoding=encoding),
    )


def _cutplane(templates, train, test, regularizer, min_count):
    from problems.sequence.tagger import SequenceTaggerCV

    t0 = time.perf_counter()
    est = SequenceTaggerCV(templates, regularizer=regularizer, min_count=min_count).fit(train.inputs, train.labels)
    seconds = time.perf_counter() - t0
    scores = evaluate(test.labels, est.predict(test.inputs))
    return {
        "method": f"cutplane {regularizer}",
        "C": float(est.C_),
        "gap": est.gap_,
        "n_iter": int(est.n_iter_),
        "n_features": int(est.feature_index_.n_features_),
        "n_active_templates": int(est.n_active_templates_),
        "n_templates": len(est.template_weights_),
        "seconds": round(seconds, 2),
        **{k: round(v, 4) for k, v in scores.items()},
    }


def _crfsuite(templates, train, test, c2, min_count, label):
    run = train_crfsuite(train.inputs, train.labels, templates, c2=c2, min_count=min_count)
    scores = evaluate(test.labels, run.predict(test.inputs))
    return {
        "method": label,
        "c2": c2,
        "n_iter": int(run.n_iterations),
        "n_features": int(run.n_attributes),
        "seconds": round(run.seconds + run.prepare_seconds, 2),
        **{k: round(v, 4) for k, v in scores.items()},
    }


def run_example(folder: Path, name: str) -> dict:
    """Train and score cutplane (mtl, ssvm) and CRFsuite (two c2) on one CRF++ example folder.

    Parameters
    ----------
    folder : Path
        The example folder (``template``, ``train.data``, ``test.data``).
    name : str
        Its key in :data:`EXAMPLES`.

    Returns
    -------
    dict
        The folder's sizes and one record per method (``runs``).
    """
    from problems.sequence.feature_index import FeatureIndex

    cfg = EXAMPLES[name]
    templates, train, test = _read(folder, cfg["encoding"])
    if FeatureIndex(templates).conditioned:
        raise InputError(
            "the templates have input-conditioned bigrams, which CRFsuite cannot express", path=folder / "template"
        )
    f = cfg["min_count"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unseen test labels: scored as wrong on both sides, counted below
        runs = [
            _cutplane(templates, train, test, "mtl", f),
            _cutplane(templates, train, test, "ssvm", f),
            _crfsuite(templates, train, test, 1.0, f, "CRFsuite c2=1 (default)"),
            _crfsuite(templates, train, test, 1.0 / (2.0 * cfg["c"]), f, f"CRFsuite c2=1/(2*{cfg['c']:g})"),
        ]
    seen = {lab for s in train.labels for lab in s}
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_average": [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "example": name,
        "encoding": cfg["encoding"],
        "min_count": f,
        "crfpp_c": cfg["c"],
        "n_train_sentences": train.n_sentences,
        "n_train_tokens": train.n_tokens,
        "n_test_sentences": test.n_sentences,
        "n_test_tokens": test.n_tokens,
        "n_labels": len(seen),
        "n_test_tokens_unseen_label": sum(lab not in seen for s in test.labels for lab in s),
        "runs": runs,
    }


def page(results: list, command: str) -> str:
    """The results page (markdown) of :func:`run_example` records."""
    lines = [
        "# CRF++'s example folders: cutplane and CRFsuite on the same features",
        "",
        f"Produced by `{command}` (`benchmarks/crfpp_examples.py`; its docstring gives the settings) on "
        f"{platform.machine()} with {os.cpu_count()} cores (shared); the folders finished at "
        f"{', '.join(r['date'] for r in results)}, with load averages "
        f"{', '.join(str(r['load_average']) for r in results)}. The four folders of CRF++'s `example/` "
        "read as they come: `JapaneseNE` with `--encoding euc-jp`, `seg` with its U+3000 tokens. Both sides "
        "see the same feature strings (the folder's `U` templates expanded by cutplane, cutoff `-f` of the "
        "folder's `exec.sh`); cutplane's `B` template is CRFsuite's own transitions. cutplane: "
        '`SequenceTaggerCV` defaults (`Cs="auto"` on 10% held-out sentences, `eps=0.1`); CRFsuite: L-BFGS, L2, '
        "at its default `c2` and at `c2 = 1/(2c)` for the folder's CRF++ `-c`. Accuracy is per token "
        "(percent); F1 is conlleval's chunk F1 where the tags are chunk tags. Test labels never seen in "
        "training are scored as errors (column 'unseen').",
        "",
        "| example | train sent. / tokens | test tokens | labels | unseen | method | C / c2 | accuracy | F1 "
        "| features | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for k, run in enumerate(r["runs"]):
            head = (
                f"{r['example']} | {r['n_train_sentences']} / {r['n_train_tokens']} | {r['n_test_tokens']} | "
                f"{r['n_labels']} | {r['n_test_tokens_unseen_label']}"
                if k == 0
                else " | | | |"
            )
            reg = f"C={run['C']:g}" if "C" in run else f"c2={run['c2']:g}"
            lines.append(
                f"| {head} | {run['method']} | {reg} | {fixed(run['accuracy'])} | {fixed(run.get('f1'))} | "
                f"{run['n_features']} | {fixed(run['seconds'], 1)} |"
            )
    lines += [
        "",
        "Features: distinct feature strings kept (cutplane's dictionary; the CRFsuite rows give it the same "
        "strings as attributes). Seconds: wall time of training (cutplane: the whole grid of C with its "
        "refit; CRFsuite: feature preparation and L-BFGS) on a shared machine, for orientation only.",
    ]
    return "\n".join(lines) + "\n"


def _version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("python-crfsuite")
    except PackageNotFoundError:  # pragma: no cover
        return None


def main(argv=None) -> list:
    """Command line: run every folder of :data:`EXAMPLES` found under the given path, write the page."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.crfpp_examples", description=__doc__.splitlines()[0])
    ap.add_argument("example_dir", type=Path, help="CRF++'s example/ folder (with chunking, basenp, JapaneseNE, seg)")
    ap.add_argument("--only", nargs="*", choices=sorted(EXAMPLES), default=None, help="run only these folders")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "crfpp_examples.md")
    ap.add_argument("--render", action="store_true", help="only write the page again from the --out JSON")
    args = ap.parse_args(argv)
    jpath = args.out.with_suffix(".json")
    if args.render:
        data = json.loads(jpath.read_text(encoding="utf-8"))
        args.out.write_text(page(data["results"], data["command"]), encoding="utf-8")
        return data["results"]
    names = args.only or list(EXAMPLES)
    missing = [n for n in names if not (args.example_dir / n / "train.data").is_file()]
    if missing:
        raise InputError(
            f"no {missing[0]}/train.data under it; expected CRF++'s example/ folder", path=args.example_dir
        )
    results = [run_example(args.example_dir / n, n) for n in names]
    command = "python -m benchmarks.crfpp_examples <crfpp>/example" + (
        f" --only {' '.join(names)}" if args.only else ""
    )
    args.out.write_text(page(results, command), encoding="utf-8")
    record = {"command": command, "pycrfsuite": _version(), "results": results}
    jpath.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
