"""sklearn-crfsuite's feature dicts on CoNLL-2000: SequenceTagger against CRFsuite, same dicts, same run.

The features are those of sklearn-crfsuite's own tutorial (``word2features``): ``bias``, the
word lowercased, its last three and two characters, ``isupper``, ``istitle``, ``isdigit``, the
POS tag and its first two characters; for the previous and the next word the word lowercased,
``istitle``, ``isupper``, the POS tag and its first two characters; ``BOS`` / ``EOS`` at the
sentence ends. One list of per-token dicts is built once and given to every learner:

- ``SequenceTagger()`` with ``templates=None`` (the feature dicts' input, each key a group):
  the plain defaults (MTL^struct, ``C=10000``, ``min_count="auto"``, the ``CuttingPlane``
  solver's defaults);
- python-crfsuite (CRFsuite's L-BFGS CRF, what sklearn-crfsuite drives) with its own defaults
  (``c1=0``, ``c2=1``, no iteration limit);
- python-crfsuite with the tutorial's settings (``c1=0.1``, ``c2=0.1``, ``max_iterations=100``,
  ``feature.possible_transitions=True``).

The arms run one after the other in one process. Test chunk F1 is
:func:`problems.metrics.chunk_f1` (conlleval's semantics, percent); wall seconds are the
training alone (``fit`` / ``Trainer.train``, the dicts given).

Run from the repository root::

    python -m benchmarks.feature_dicts                 # the full run, writes docs/results/feature_dicts.md
    python -m benchmarks.feature_dicts --quick         # the first 300 training and 300 test sentences

``--n-sentences N`` takes the first N training sentences (and at most N test sentences);
``--json`` keeps the records and ``--render JSON`` rewrites the page from them.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

__all__ = ["word2features", "sent2features", "run_cutplane", "run_crfsuite", "render", "main"]

PAGE = Path(__file__).resolve().parents[1] / "docs" / "results" / "feature_dicts.md"
QUICK_SENTENCES = 300

#: python-crfsuite's arms: name -> its trainer parameters (the rest are CRFsuite's defaults).
CRFSUITE_ARMS = {
    "python-crfsuite, its defaults": {"c1": 0.0, "c2": 1.0},
    "python-crfsuite, the tutorial's settings": {
        "c1": 0.1,
        "c2": 0.1,
        "max_iterations": 100,
        "feature.possible_transitions": True,
    },
}


def word2features(sent, i):
    """sklearn-crfsuite tutorial's features of token ``i`` of ``sent`` (rows ``(word, postag)``)."""
    word, postag = sent[i][0], sent[i][1]
    features = {
        "bias": 1.0,
        "word.lower()": word.lower(),
        "word[-3:]": word[-3:],
        "word[-2:]": word[-2:],
        "word.isupper()": word.isupper(),
        "word.istitle()": word.istitle(),
        "word.isdigit()": word.isdigit(),
        "postag": postag,
        "postag[:2]": postag[:2],
    }
    if i > 0:
        word1, postag1 = sent[i - 1][0], sent[i - 1][1]
        features.update(
            {
                "-1:word.lower()": word1.lower(),
                "-1:word.istitle()": word1.istitle(),
                "-1:word.isupper()": word1.isupper(),
                "-1:postag": postag1,
                "-1:postag[:2]": postag1[:2],
            }
        )
    else:
        features["BOS"] = True
    if i < len(sent) - 1:
        word1, postag1 = sent[i + 1][0], sent[i + 1][1]
        features.update(
            {
                "+1:word.lower()": word1.lower(),
                "+1:word.istitle()": word1.istitle(),
                "+1:word.isupper()": word1.isupper(),
                "+1:postag": postag1,
                "+1:postag[:2]": postag1[:2],
            }
        )
    else:
        features["EOS"] = True
    return features


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


def _data(n_sentences):
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll

    train = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"))
    test = read_conll(dataset_path("conll2000-chunking", "test.txt.gz"))
    n = n_sentences or len(train.inputs)
    m = min(n_sentences or len(test.inputs), len(test.inputs))
    X = [sent2features(s) for s in train.inputs[:n]]
    X_test = [sent2features(s) for s in test.inputs[:m]]
    return X, list(train.labels[:n]), X_test, list(test.labels[:m])


def _scores(y_test, pred) -> dict:
    from problems.metrics import chunk_f1

    s = chunk_f1(y_test, pred)
    return {"test_chunk_f1": s.f1, "test_token_accuracy": s.accuracy}


def run_cutplane(X, y, X_test, y_test) -> dict:
    """``SequenceTagger()`` (plain defaults) on the feature dicts: wall, status, gap, F1, weights."""
    from problems import SequenceTagger

    est = SequenceTagger()
    t0 = time.perf_counter()
    est.fit(X, y)
    wall = time.perf_counter() - t0
    weights = sorted(est.template_weights_.items(), key=lambda kv: -kv[1])
    return {
        "arm": "SequenceTagger(), plain defaults",
        "params": f"MTL^struct, C={est.C:g}, min_count={est.min_count_}",
        "fit_seconds": wall,
        "status": est.result_.status,
        "n_iter": int(est.n_iter_),
        "gap": float(est.gap_),
        "n_features": int(est.feature_index_.n_features_),
        "n_active_templates": int(est.n_active_templates_),
        "n_templates": len(est.template_weights_),
        "template_weights": weights,
        **_scores(y_test, est.predict(X_test)),
    }


def run_crfsuite(name, params, X, y, X_test, y_test) -> dict:
    """python-crfsuite trained on the same dicts with ``params``: wall of ``Trainer.train``, F1."""
    import pycrfsuite

    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.set_params(params)
    with tempfile.TemporaryDirectory() as tmp:
        model = str(Path(tmp) / "model.crfsuite")
        t0 = time.perf_counter()
        trainer.train(model)
        wall = time.perf_counter() - t0
        info = trainer.logparser.last_iteration or {}
        tagger = pycrfsuite.Tagger()
        tagger.open(model)
        pred = [tagger.tag(xseq) for xseq in X_test]
        n_features = len(tagger.info().state_features) + len(tagger.info().transitions)
        tagger.close()
    return {
        "arm": name,
        "params": ", ".join(f"{k}={v}" for k, v in params.items()),
        "fit_seconds": wall,
        "n_iter": int(info.get("num", 0)),
        "n_features": n_features,
        **_scores(y_test, pred),
    }


def render(meta: dict, arms: list) -> str:
    """The results page (markdown) of the records."""
    lines = [
        "# sklearn-crfsuite's feature dicts: SequenceTagger against CRFsuite (issue 39)",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Written by `benchmarks/feature_dicts.py` (never by hand) on {meta['date']}; {meta['machine']}. "
        f"Data: CoNLL-2000 chunking, {meta['n_train']} training sentences, {meta['n_test']} test sentences. "
        "The arms run one after the other in one process (a shared machine: seconds are noisy).",
        "",
        "Every learner is given the same per-token feature dicts, those of sklearn-crfsuite's tutorial "
        "(`word2features`: bias, word lowercased, suffixes [-3:] and [-2:], isupper, istitle, isdigit, POS, "
        "POS[:2]; for the previous and next word: lowercased, istitle, isupper, POS, POS[:2]; BOS / EOS). "
        "`SequenceTagger()` reads them with `templates=None` (each key a template group of MTL^struct, "
        "strings and booleans as indicators, numbers as real-valued features: the `bias` 1.0 is its indicator); "
        "python-crfsuite is what "
        "sklearn-crfsuite drives. Test chunk F1: `problems.metrics.chunk_f1` (conlleval's semantics), percent. "
        "Fit seconds: training alone.",
        "",
        "| learner | settings | fit seconds | iterations | status (gap) | features | test chunk F1 | test token accuracy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for a in arms:
        status = f"{a['status']} ({a['gap']:.4g})" if "status" in a else "-"
        lines.append(
            f"| {a['arm']} | {a['params']} | {a['fit_seconds']:.1f} | {a['n_iter']} | {status} | {a['n_features']} "
            f"| {a['test_chunk_f1']:.2f} | {a['test_token_accuracy']:.2f} |"
        )
    ours = arms[0]
    refs = arms[1:]
    lines += [
        "",
        "Features: the tagger's feature strings (each paired with every label, plus the label transitions); "
        "CRFsuite's count is its state features (attribute-label pairs seen in training) plus its transitions.",
        "",
    ]
    if refs:
        best = max(refs, key=lambda a: a["test_chunk_f1"])
        verdict = "at least" if ours["test_chunk_f1"] >= best["test_chunk_f1"] else "below"
        lines += [
            f"The tagger's test chunk F1 ({ours['test_chunk_f1']:.2f}) is {verdict} the better CRFsuite arm's "
            f"({best['arm']}: {best['test_chunk_f1']:.2f}).",
            "",
        ]
    lines += [
        f"The tagger's template weights (`template_weights_`, MTL^struct's `mu`) name the dict keys; "
        f"{ours['n_active_templates']} of {ours['n_templates']} groups are active (`B` is the transitions):",
        "",
        "| group (dict key) | weight |",
        "|---|---|",
    ]
    lines += [f"| `{k}` | {v:.4f} |" for k, v in ours["template_weights"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    from benchmarks._data import use_shared_data

    ap = argparse.ArgumentParser(prog="python -m benchmarks.feature_dicts", description=__doc__.splitlines()[0])
    ap.add_argument("--n-sentences", type=int, default=None, help="the first N training (and at most N test) sentences")
    ap.add_argument("--quick", action="store_true", help=f"--n-sentences {QUICK_SENTENCES}")
    ap.add_argument("--out", type=Path, default=PAGE)
    ap.add_argument("--json", type=Path, default=None, help="also write the records as JSON")
    ap.add_argument("--render", type=Path, default=None, help="only rewrite the page --out from this script's --json")
    args = ap.parse_args(argv)
    if args.render is not None:
        saved = json.loads(args.render.read_text())
        args.out.write_text(render(saved["meta"], saved["arms"]))
        return 0
    use_shared_data()
    n = QUICK_SENTENCES if args.quick and args.n_sentences is None else args.n_sentences
    X, y, X_test, y_test = _data(n)
    arms = [run_cutplane(X, y, X_test, y_test)]
    arms += [run_crfsuite(name, params, X, y, X_test, y_test) for name, params in CRFSUITE_ARMS.items()]
    given = sys.argv[1:] if argv is None else list(argv)
    meta = {
        "command": "python -m benchmarks.feature_dicts" + "".join(" " + shlex.quote(a) for a in given),
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
        "n_train": len(X),
        "n_test": len(X_test),
    }
    args.out.write_text(render(meta, arms))
    if args.json is not None:
        args.json.write_text(json.dumps({"meta": meta, "arms": arms}, indent=1) + "\n")
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
