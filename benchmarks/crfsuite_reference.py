"""CRFsuite (python-crfsuite) on the same CRF++ template features as ours: the reference of the results pages.

The CRF++ templates are expanded by our own code (:class:`problems.sequence.feature_index.FeatureIndex`
and :meth:`problems.sequence.templates.Template.features`), and each token's feature strings of the
``U`` templates are given to CRFsuite as its *attributes* (value 1.0). CRFsuite pairs attributes with
labels itself and adds its own label-bigram (transition) features, which play the ``B`` template's
role. So both learners see the same feature strings; the weights differ as CRFsuite's defaults
make them differ:

- CRFsuite generates a state feature only for an (attribute, label) pair seen in training
  (``feature.possible_states=False``, its default), and a transition only for a label pair seen in
  training; ours pairs every feature with every label. ``n_features`` below is CRFsuite's count;
  ``n_attributes`` is the number of distinct feature strings given (ours, ``FeatureIndex.n_features_``).
- ``min_count`` is applied by our :class:`FeatureIndex` (a feature string seen fewer than ``min_count``
  times in the training corpus is dropped, CRF++'s ``-f``) before the attributes are given;
  CRFsuite's own ``feature.minfreq`` (a frequency of (attribute, label) pairs, not the same rule) stays
  at its default, 0.
- "L2, default settings": ``algorithm="lbfgs"``, ``c1=0``, ``c2=1.0`` (CRFsuite's default) and
  CRFsuite's default stopping (``epsilon=1e-5`` on the relative improvement over ``period=10``
  iterations, no iteration limit), unless ``max_iterations`` is given.

CRFsuite's objective is the negative conditional log-likelihood of the training set plus
``c1 ||w||_1 + c2 ||w||^2`` (not divided by the number of sentences).

Run from the repository root::

    python -m benchmarks.crfsuite_reference --data conll2000 --templates chunking
    python -m benchmarks.crfsuite_reference --data conll2002 --templates ner134 --max-sentences 1000

which prints one JSON line: training wall and CPU seconds (``trainer.train`` only: CRFsuite's
feature generation, L-BFGS and writing the model), the seconds spent by our feature extraction and
by handing the sequences to CRFsuite (``prepare_seconds``), CRFsuite's iterations, final objective
and feature counts, and per evaluation set the chunk F1 (conlleval semantics, :func:`problems.metrics.chunk_f1`,
for BIO tag sets) and the token accuracy. For CoNLL-2002 Spanish the evaluation sets are ``dev``
(``esp.testa``) and ``test`` (``esp.testb``); CRFsuite is trained on ``esp.train`` alone, at the
one ``c2`` given (it does not use the dev set).

python-crfsuite is the optional extra ``cutplane[bench]`` (also in ``cutplane[test]``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cutplane.exceptions import InputError
from problems.sequence.feature_index import FeatureIndex
from problems.sequence.templates import Template, parse_templates

__all__ = [
    "CRFsuiteRun",
    "token_feature_strings",
    "crfsuite_attributes",
    "train_crfsuite",
    "predict_crfsuite",
    "evaluate",
    "load_dataset",
    "resolve_templates",
    "main",
]

#: CRFsuite's training parameters for "L2, default settings" (the rest are CRFsuite's defaults).
DEFAULT_PARAMS = {"c1": 0.0, "c2": 1.0}

#: Files of the named datasets under the data folder: (folder, train, {evaluation set: file}).
DATASETS = {
    "conll2000": ("conll2000-chunking", "train.txt.gz", {"test": "test.txt.gz"}),
    "conll2002": ("conll2002-ner-es", "esp.train.gz", {"dev": "esp.testa.gz", "test": "esp.testb.gz"}),
}


def _pycrfsuite():
    try:
        import pycrfsuite
    except ImportError as exc:  # pragma: no cover - installed with the bench and test extras
        raise ImportError(
            "the CRFsuite reference needs python-crfsuite: pip install 'cutplane[bench]' "
            "(or pip install 'python-crfsuite>=0.9')"
        ) from exc
    return pycrfsuite


def _unigram_templates(templates) -> list[Template]:
    if isinstance(templates, FeatureIndex):
        tpls = templates.templates
    elif isinstance(templates, str):
        tpls = parse_templates(templates)
    else:
        tpls = list(templates)
    return [t for t in tpls if t.kind == "U"]


def token_feature_strings(templates, sentence: Sequence[Sequence[str]]) -> list[list[str]]:
    """Per token, the feature strings of the ``U`` templates (CRF++ expansion), in template order.

    Parameters
    ----------
    templates : str, list of Template or FeatureIndex
        CRF++ template text, parsed templates, or a feature index (its templates).
    sentence : sequence of sequences of str
        Per token, its input columns.

    Returns
    -------
    list of list of str
        ``out[t][k]`` is the string of the ``k``-th ``U`` template at token ``t``.

    Raises
    ------
    InputError
        A token with fewer input columns than the templates refer to.
    """
    unigram = _unigram_templates(templates)
    n = len(sentence)
    if n == 0:
        return []
    n_needed = 1 + max((t.max_column for t in unigram), default=-1)
    short = min(len(row) for row in sentence)
    if short < n_needed:
        raise InputError(f"a token has {short} input columns, the templates need {n_needed}", field="columns")
    columns = list(zip(*sentence))
    per_template = [t.features(columns, n) for t in unigram]
    return [list(strings) for strings in zip(*per_template)] if per_template else [[] for _ in range(n)]


def crfsuite_attributes(index: FeatureIndex, sentence: Sequence[Sequence[str]]) -> list[list[str]]:
    """The attributes given to CRFsuite for one sentence: per token, its feature strings in ``index``.

    A feature string absent from the fitted dictionary (unseen in training, or dropped by
    ``min_count``) is left out, as :meth:`FeatureIndex.transform` ignores it.

    Parameters
    ----------
    index : FeatureIndex
        Fitted on the training sentences.
    sentence : sequence of sequences of str

    Returns
    -------
    list of list of str
    """
    vocab = index.vocabulary_
    return [[s for s in strings if s in vocab] for strings in token_feature_strings(index, sentence)]


@dataclass(frozen=True)
class CRFsuiteRun:
    """One CRFsuite training run and its model.

    Attributes
    ----------
    seconds : float
        Wall seconds of CRFsuite's training call (feature generation, L-BFGS, writing the model).
    cpu_seconds : float
        CPU seconds of this process during that call (CRFsuite trains on one thread).
    prepare_seconds : float
        Wall seconds of our feature extraction and of handing the sequences to CRFsuite.
    n_iterations : int
        L-BFGS iterations CRFsuite ran.
    loss : float or None
        CRFsuite's objective at its last iteration.
    n_features : int or None
        CRFsuite's feature count (state features of seen (attribute, label) pairs and transitions).
    n_attributes : int
        Distinct feature strings given as attributes (our ``FeatureIndex.n_features_``).
    n_labels : int
    n_sentences, n_tokens : int
        Training sentences and tokens.
    params : dict
        CRFsuite's parameters as it reported them after training.
    model_path : str or None
        The model file when one was asked for (the model is also held in memory).
    feature_index : FeatureIndex
        Our feature dictionary, fitted on the training sentences.
    model : bytes
        The CRFsuite model file's content.
    """

    seconds: float
    cpu_seconds: float
    prepare_seconds: float
    n_iterations: int
    loss: float | None
    n_features: int | None
    n_attributes: int
    n_labels: int
    n_sentences: int
    n_tokens: int
    params: dict
    model_path: str | None
    feature_index: FeatureIndex = field(repr=False, compare=False)
    model: bytes = field(repr=False, compare=False)

    def predict(self, X) -> list[list[str]]:
        """Label sequences of ``X`` (per sentence, per token, the input columns) by CRFsuite's Viterbi."""
        return predict_crfsuite(self, X)


def _check_pairs(X, y):
    if len(X) != len(y):
        raise InputError(f"X has {len(X)} sentences, y has {len(y)}", field="y")
    if not X:
        raise InputError("no training sentence", field="X")
    for i, (x, labels) in enumerate(zip(X, y)):
        if len(x) != len(labels):
            raise InputError(f"sentence {i}: {len(x)} tokens but {len(labels)} labels", field="y")
        if not x:
            raise InputError(f"sentence {i} is empty", field="X")


def train_crfsuite(
    X_train,
    y_train,
    templates,
    *,
    c2: float = 1.0,
    c1: float = 0.0,
    max_iterations: int | None = None,
    min_count: int = 1,
    model_path=None,
) -> CRFsuiteRun:
    """Train CRFsuite (L-BFGS) on the ``U``-template feature strings of our feature extraction.

    Parameters
    ----------
    X_train : list of list of sequences of str
        Per sentence, per token, the input columns.
    y_train : list of list of str
        Label sequences.
    templates : str or list of Template
        CRF++ templates; the ``U`` ones give the attributes, CRFsuite's transitions replace ``B``.
    c2 : float, default=1.0
        CRFsuite's L2 coefficient (its default).
    c1 : float, default=0.0
        CRFsuite's L1 coefficient (0: L2 only).
    max_iterations : int, optional
        L-BFGS iteration limit; by default none (CRFsuite's convergence test stops it).
    min_count : int, default=1
        Feature strings seen fewer times in ``X_train`` are not given (CRF++'s ``-f``).
    model_path : str or os.PathLike, optional
        Where to keep the model file; by default it is written to a temporary file, read into
        :attr:`CRFsuiteRun.model` and deleted.

    Returns
    -------
    CRFsuiteRun

    Raises
    ------
    InputError
        Mismatched ``X_train`` / ``y_train``, an empty corpus or sentence, a negative coefficient,
        a non-positive ``max_iterations``.
    """
    pycrfsuite = _pycrfsuite()
    X_train, y_train = list(X_train), list(y_train)
    _check_pairs(X_train, y_train)
    for name, value in (("c2", c2), ("c1", c1)):
        if not float(value) >= 0.0:
            raise InputError(f"{name} must be >= 0, got {value}", field=name)
    if max_iterations is not None and int(max_iterations) < 1:
        raise InputError(f"max_iterations must be >= 1, got {max_iterations}", field="max_iterations")

    t0 = time.perf_counter()
    index = FeatureIndex(templates, min_count=min_count)
    index.fit(X_train)
    trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
    for x, labels in zip(X_train, y_train):
        trainer.append(crfsuite_attributes(index, x), [str(lab) for lab in labels])
    params = {"c1": float(c1), "c2": float(c2)}
    if max_iterations is not None:
        params["max_iterations"] = int(max_iterations)
    trainer.set_params(params)
    prepare = time.perf_counter() - t0

    with tempfile.TemporaryDirectory(prefix="crfsuite_") as tmp:
        path = Path(model_path) if model_path is not None else Path(tmp) / "model.crfsuite"
        w0, c0 = time.perf_counter(), time.process_time()
        trainer.train(os.fspath(path))
        seconds, cpu = time.perf_counter() - w0, time.process_time() - c0
        model = path.read_bytes()
    log = trainer.logparser
    last = log.last_iteration or {}
    return CRFsuiteRun(
        seconds=seconds,
        cpu_seconds=cpu,
        prepare_seconds=prepare,
        n_iterations=len(log.iterations),
        loss=last.get("loss"),
        n_features=log.featgen_num_features,
        n_attributes=int(index.n_features_),
        n_labels=len({lab for labels in y_train for lab in labels}),
        n_sentences=len(X_train),
        n_tokens=sum(len(x) for x in X_train),
        params=dict(trainer.get_params()),
        model_path=None if model_path is None else os.fspath(model_path),
        feature_index=index,
        model=model,
    )


def predict_crfsuite(run: CRFsuiteRun, X) -> list[list[str]]:
    """Label sequences of ``X`` by the CRFsuite model of ``run`` (same attributes as in training).

    Parameters
    ----------
    run : CRFsuiteRun
    X : list of list of sequences of str

    Returns
    -------
    list of list of str
    """
    pycrfsuite = _pycrfsuite()
    tagger = pycrfsuite.Tagger()
    tagger.open_inmemory(run.model)
    try:
        return [list(tagger.tag(crfsuite_attributes(run.feature_index, x))) if len(x) else [] for x in X]
    finally:
        tagger.close()


def evaluate(gold, pred) -> dict:
    """Token accuracy (percent) and, for a BIO / IOBES tag set, conlleval's chunk P / R / F1.

    Parameters
    ----------
    gold, pred : list of list of str

    Returns
    -------
    dict
        ``accuracy`` and, for chunk tag sets, ``f1``, ``precision``, ``recall``.
    """
    from problems.metrics import chunk_f1, is_chunk_tagset, token_accuracy

    out = {"accuracy": token_accuracy(gold, pred)}
    if is_chunk_tagset({lab for labels in gold for lab in labels}):
        score = chunk_f1(gold, pred)
        out.update(f1=score.f1, precision=score.precision, recall=score.recall)
    return out


def load_dataset(name: str):
    """Training corpus and evaluation corpora of a named dataset.

    Parameters
    ----------
    name : {"conll2000", "conll2002"}

    Returns
    -------
    train : problems.io.conll.ColumnCorpus
    evaluation : dict of str to ColumnCorpus
        ``{"test": ...}`` (CoNLL-2000) or ``{"dev": esp.testa, "test": esp.testb}`` (CoNLL-2002).
    """
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll

    if name not in DATASETS:
        raise InputError(f"unknown dataset {name!r}; expected one of {sorted(DATASETS)}", field="data")
    folder, train, evaluation = DATASETS[name]
    return (
        read_conll(dataset_path(folder, train)),
        {key: read_conll(dataset_path(folder, f)) for key, f in evaluation.items()},
    )


def resolve_templates(spec: str) -> str:
    """Template text of a named set (:data:`problems.sequence.template_sets.TEMPLATE_SETS`) or a file."""
    from problems.sequence.template_sets import TEMPLATE_SETS

    key = spec.lower()
    if key in TEMPLATE_SETS:
        return TEMPLATE_SETS[key]
    path = Path(spec)
    if path.is_file():
        return path.read_text(encoding="utf-8")
    raise InputError(
        f"{spec!r} is neither a template set ({', '.join(sorted(TEMPLATE_SETS))}) nor a file", field="templates"
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.crfsuite_reference",
        description="CRFsuite (lbfgs, L2) on our CRF++ template features; prints one JSON line.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", choices=sorted(DATASETS), help="named dataset under the data folder")
    src.add_argument("--train", help="a CoNLL / CRF++ training file (label last); evaluate with --test")
    p.add_argument("--test", nargs="*", default=[], help="evaluation files with --train")
    p.add_argument("--templates", default="chunking", help="template set name or template file")
    p.add_argument("--max-sentences", type=int, default=None, help="train on the first N sentences")
    p.add_argument("--max-test-sentences", type=int, default=None, help="evaluate on the first N sentences")
    p.add_argument("--c2", type=float, default=DEFAULT_PARAMS["c2"])
    p.add_argument("--c1", type=float, default=DEFAULT_PARAMS["c1"])
    p.add_argument("--max-iterations", type=int, default=None)
    p.add_argument("--min-count", type=int, default=1)
    p.add_argument("--model", default=None, help="keep the CRFsuite model file here")
    p.add_argument("--out", default=None, help="also append the JSON line to this file")
    return p


def main(argv=None) -> dict:
    """Command line: train CRFsuite, evaluate, print (and return) one JSON record."""
    args = _parser().parse_args(argv)
    from problems.io.conll import read_conll

    if args.data:
        train, evaluation = load_dataset(args.data)
    else:
        train = read_conll(args.train)
        evaluation = {Path(f).name: read_conll(f) for f in args.test}
    templates = resolve_templates(args.templates)
    n = args.max_sentences
    X, y = train.inputs[:n], train.labels[:n]
    run = train_crfsuite(
        X,
        y,
        templates,
        c2=args.c2,
        c1=args.c1,
        max_iterations=args.max_iterations,
        min_count=args.min_count,
        model_path=args.model,
    )
    record = {
        "method": "crfsuite",
        "pycrfsuite": _version(),
        "data": args.data or args.train,
        "templates": args.templates,
        "c2": args.c2,
        "c1": args.c1,
        "min_count": args.min_count,
        "max_iterations": args.max_iterations,
        "n_sentences": run.n_sentences,
        "n_tokens": run.n_tokens,
        "n_labels": run.n_labels,
        "n_attributes": run.n_attributes,
        "n_features": run.n_features,
        "iterations": run.n_iterations,
        "loss": run.loss,
        "seconds": round(run.seconds, 3),
        "cpu_seconds": round(run.cpu_seconds, 3),
        "prepare_seconds": round(run.prepare_seconds, 3),
    }
    m = args.max_test_sentences
    for key, corpus in evaluation.items():
        t0 = time.perf_counter()
        pred = run.predict(corpus.inputs[:m])
        record[f"{key}_predict_seconds"] = round(time.perf_counter() - t0, 3)
        for metric, value in evaluate(corpus.labels[:m], pred).items():
            record[f"{key}_{metric}"] = round(value, 4)
    record["load_average"] = [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None
    line = json.dumps(record)
    sys.stdout.write(line + "\n")
    if args.out:
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    return record


def _version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("python-crfsuite")
    except PackageNotFoundError:  # pragma: no cover
        return None


if __name__ == "__main__":
    main()
