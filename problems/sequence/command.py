"""CLI tasks for sequence labelling (CoNLL / CRF++ columns) and Chinese word segmentation.

::

    cutplane train --task sequence --templates T.tpl --train train.txt [--dev dev.txt] \\
        [--C auto | --C 100 1000 10000 | --C 10] [--dev-fraction 0.1] [--time-limit S] \\
        --regularizer mtl|ssvm|pmtl [--p 1.5] --model M.npz --report R.json \\
        [--solver cutting-plane|spom [--epochs 20] [--eta0 X] [--last-iterate] [--seed 0]]
    cutplane train --task segment --train words.txt [--templates tp1|tp2|FILE] ...
    cutplane predict --model M.npz --input FILE [--output OUT]     (the input format back,
        with the predicted column appended / the text segmented)
    cutplane evaluate --model M.npz --test FILE [--report R.json]  (chunk F1, or segmentation
        P/R/F1 and R_iv, or token accuracy)

``--encoding CODEC`` (default utf-8) is the text encoding of the data and template files
(``euc-jp`` for CRF++'s JapaneseNE example, ``latin-1`` for CoNLL-2002's original files); predictions
written with ``--output`` use it too. A template that reads a column the data does not have is
refused before training, naming the template file, its line and the template.

``--C`` is ``auto`` unless given: the regulariser's grid, the model chosen by the validation
score (chunk F1 for BIO / IOB tags, token accuracy otherwise) on ``--dev`` or on
``--dev-fraction`` (default 0.1) of the training sentences; ``--dev`` is also scored after
training as before (``report["dev"]``).
``--solver`` chooses between the two solvers of the same ``F``
(:func:`problems.command_options.make_solver`): the cutting-plane engine (default, certified
gap) and SPOM (the online baseline, ``--epochs``, ``--eta0``, ``--last-iterate``, ``--seed``;
no certificate: the report's ``lower_bound`` and ``gap`` are null). The
:class:`~problems.command_options.Task` records :data:`SEQUENCE` and :data:`SEGMENT` are listed
in the CLI's task table (:data:`problems.cli.tasks.TASKS`).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from cutplane.exceptions import InputError
from problems.command_options import (
    STRUCTURED_REGULARIZERS,
    Task,
    check_holdout,
    chooses_C,
    cv_estimator_kwargs,
    cv_fit_kwargs,
    make_solver,
    selection_report,
    solver_report,
    write_plots,
)

__all__ = [
    "nbest_labels",
    "predict_nbest_to",
    "train_sequence",
    "train_segment",
    "evaluate_model",
    "tagger_report",
    "templates_text",
    "SEQUENCE",
    "SEGMENT",
]

_SCHEME = "BMES"


def templates_text(spec, default, *, encoding="utf-8"):
    """A named template set (a key of ``problems.sequence.template_sets.TEMPLATE_SETS``), a file
    (read in ``encoding``), or the task's default."""
    return _templates(spec, default, encoding=encoding)[0]


def _templates(spec, default, *, encoding="utf-8"):
    """``(text, templates)``: the template text and its templates, parsed with the file's path
    (None for a named set), so errors name the file and line."""
    from problems.sequence.template_sets import TEMPLATE_SETS
    from problems.sequence.templates import parse_templates

    if spec is None:
        text = TEMPLATE_SETS[default]
        return text, parse_templates(text)
    if str(spec).lower() in TEMPLATE_SETS:
        text = TEMPLATE_SETS[str(spec).lower()]
        return text, parse_templates(text)
    path = Path(spec)
    if not path.exists():
        raise InputError(f"no template file {path} (or a set name: {sorted(TEMPLATE_SETS)})", field="--templates")
    from problems.io._open import open_text

    with open_text(path, encoding) as fh:
        text = fh.read()
    return text, parse_templates(text, path=path)  # errors name the template file and line


def _check_columns(templates, corpus, path) -> None:
    """Refuse templates reading a column the data of ``corpus`` (read from ``path``) does not have,
    naming the template file, line and template (:func:`problems.sequence.templates.check_template_columns`)."""
    from problems.sequence.templates import check_template_columns

    check_template_columns(templates, len(corpus.inputs[0][0]), data_path=path, line=corpus.first_lines[0])


def _check_model_columns(est, corpus, path, model_path) -> None:
    """As :func:`_check_columns` for the templates stored in a model file (named with the model)."""
    n = len(corpus.inputs[0][0])
    for k, tpl in enumerate(est.feature_index_.templates, start=1):
        if tpl.max_column >= n:
            raise InputError(
                f"template {tpl.name!r} ({tpl.text!r}, line {k} of the templates stored in {model_path}) reads column "
                f"{tpl.max_column}, but this file has {n} input column(s) (0..{n - 1}); expected the columns the "
                "model was trained on",
                path=path,
                line=corpus.first_lines[0],
                field="columns",
            )


def tagger_report(est, *, dev_file=None) -> dict:
    """The JSON report of a fitted :class:`~problems.sequence.tagger.SequenceTagger` (scale F):
    :func:`solver_report` (the model at the chosen C), the choice of C
    (:func:`~problems.command_options.selection_report`: ``C``, ``C_grid``, ``path``,
    ``validation``), the feature cutoff used (``min_count``) and the feature and label counts."""
    return dict(
        solver_report(est),
        **selection_report(est, source_file=dev_file),
        min_count=int(est.feature_index_.min_count),
        n_features=int(est.feature_index_.n_features_),
        n_labels=len(est.labels_),
    )


def _fit_tagger(args, templates, X, y, read_dev):
    from problems.sequence.tagger import SequenceTagger, SequenceTaggerCV

    reg = args.regularizer if args.regularizer in STRUCTURED_REGULARIZERS else None
    if reg is None:
        raise InputError(
            f"--regularizer {args.regularizer} is for linear tasks; use mtl, ssvm or pmtl", field="--regularizer"
        )
    check_holdout(args, len(X), "sentences")
    common = dict(
        regularizer=reg,
        p=args.p,
        min_count="auto" if args.min_count is None else args.min_count,
        solver=make_solver(args, method=getattr(args, "method", None)),
    )
    if chooses_C(args):  # --C auto (the default), several values, or --dev-fraction
        est = SequenceTaggerCV(templates, **cv_estimator_kwargs(args), **common)
        kwargs = cv_fit_kwargs(args, read_dev)
    else:
        est, kwargs = SequenceTagger(templates, C=args.C, **common), {}
    with warnings.catch_warnings():
        if "validation_data" in kwargs:  # the dev file is scored after training too: one warning, naming it
            from problems.validation import UnseenLabelWarning

            warnings.filterwarnings("ignore", category=UnseenLabelWarning)
        return est.fit(X, y, **kwargs)


def _conll_reader(encoding, templates):
    """``read(path) -> (inputs, labels)`` of a labelled column file in ``encoding`` (the dev file),
    its columns checked against the templates."""

    def read(path):
        from problems.io.conll import read_conll

        corpus = read_conll(path, encoding=encoding)
        _check_columns(templates, corpus, path)
        return corpus.inputs, corpus.labels

    return read


def _segmented_reader(encoding):
    def read(path):
        from problems.io.segmentation import read_segmented_as_tags

        corpus = read_segmented_as_tags(path, _SCHEME, encoding=encoding)
        return corpus.inputs, corpus.labels

    return read


def _dev_scores(est, task, path, encoding="utf-8"):
    if path is None:
        return {}
    return {"dev": evaluate_model(est, task, path, encoding=encoding)}


def train_sequence(args):
    """``--task sequence``: CoNLL / CRF++ columns, label in the last column, in ``--encoding``."""
    from problems.io.conll import read_conll

    if args.templates is None:
        raise InputError("--task sequence needs --templates (a CRF++ template file or 'chunking')", field="--templates")
    encoding = getattr(args, "encoding", "utf-8")
    text, templates = _templates(args.templates, "chunking", encoding=encoding)
    corpus = read_conll(args.train, encoding=encoding)
    _check_columns(templates, corpus, args.train)
    est = _fit_tagger(args, text, corpus.inputs, corpus.labels, _conll_reader(encoding, templates))
    report = tagger_report(est, dev_file=args.dev)
    report.update(
        n_sentences=corpus.n_sentences, n_tokens=corpus.n_tokens, **_dev_scores(est, "sequence", args.dev, encoding)
    )
    write_plots(est, args, report)
    return est, report


def train_segment(args):
    """``--task segment``: segmented text (words separated by spaces) -> BMES character tags."""
    from problems.io.segmentation import read_segmented_as_tags

    encoding = getattr(args, "encoding", "utf-8")
    corpus = read_segmented_as_tags(args.train, _SCHEME, encoding=encoding)
    text = templates_text(args.templates, "tp1", encoding=encoding)
    est = _fit_tagger(args, text, corpus.inputs, corpus.labels, _segmented_reader(encoding))
    report = tagger_report(est, dev_file=args.dev)
    report.update(
        n_sentences=corpus.n_sentences, n_chars=corpus.n_tokens, **_dev_scores(est, "segment", args.dev, encoding)
    )
    write_plots(est, args, report)
    return est, report


def evaluate_model(est, task, path, *, train_words=None, encoding="utf-8", model_path=None) -> dict:
    """The task metric of a fitted tagger on a labelled file (read in ``encoding``), in percent:
    segmentation P / R / F1 (and R_iv / R_oov), or chunk P / R / F1, token accuracy and
    ``per_type`` (chunk type -> its P / R / F1 and counts)."""
    if task == "segment":
        from problems.io.segmentation import read_segmented, tags_to_words, words_to_tags
        from problems.metrics.segmentation import segmentation_scores

        gold = read_segmented(path, encoding=encoding)
        inputs = [[(c,) for c in words_to_tags(words, _SCHEME)[0]] for words in gold]
        pred_tags = est.predict(inputs)
        pred = [tags_to_words([row[0] for row in x], t, _SCHEME) for x, t in zip(inputs, pred_tags)]
        score = (
            segmentation_scores(gold, pred, train_words) if train_words is not None else segmentation_scores(gold, pred)
        )
        from dataclasses import asdict

        return asdict(score)
    from problems.io.conll import read_conll
    from problems.metrics.chunking import chunk_f1
    from problems.validation import check_label_overlap, warn_unseen_labels

    corpus = read_conll(path, encoding=encoding)
    labels = corpus.labels
    assert labels is not None  # read_conll reads a label column unless told labeled=False
    _check_model_columns(est, corpus, path, model_path or "the model")
    check_label_overlap(labels, est.labels_.labels, path=path, model=f"the {task} model")
    warn_unseen_labels(labels, est.labels_.labels, path=path)
    pred = est.predict(corpus.inputs)
    s = chunk_f1(labels, pred)
    return {
        "precision": s.precision,
        "recall": s.recall,
        "f1": s.f1,
        "accuracy": s.accuracy,
        "n_sentences": corpus.n_sentences,
        "n_tokens": corpus.n_tokens,
        "per_type": {  # conlleval's per-type lines (percent)
            name: {
                "precision": t.precision,
                "recall": t.recall,
                "f1": t.f1,
                "n_gold": t.n_gold,
                "n_pred": t.n_pred,
                "n_correct": t.n_correct,
            }
            for name, t in s.per_type.items()
        },
    }


def _predict_to(task):
    def run(model_path, input_path, output_path, *, encoding="utf-8"):
        from problems.sequence.model_file import TaggerModel

        est = TaggerModel.load(model_path)
        out = sys.stdout if output_path is None else open(output_path, "w", encoding=encoding)
        try:
            if task == "segment":
                from problems.io.segmentation import iter_segmented, tags_to_words

                for _, words in iter_segmented(input_path, encoding=encoding):
                    chars = [c for wd in words for c in wd]
                    tags = est.predict([[(c,) for c in chars]])[0] if chars else []
                    out.write(" ".join(tags_to_words(chars, tags, _SCHEME)) + "\n")
            else:
                from problems.io.conll import read_conll

                corpus = read_conll(input_path, labeled=False, encoding=encoding)
                _check_model_columns(est, corpus, input_path, model_path)
                pred = est.predict(corpus.inputs)
                for rows, labels in zip(corpus.inputs, pred):
                    for row, lab in zip(rows, labels):
                        out.write(" ".join((*row, lab)) + "\n")
                    out.write("\n")
        finally:
            if out is not sys.stdout:
                out.close()
        return 0

    return run


def nbest_labels(est, inputs, n: int):
    """The ``n`` best label sequences of each sentence of ``inputs`` and their scores, best first
    (:func:`oracles.viterbi_nbest.viterbi_nbest` on the tagger's unary and transition scores):
    a list, per sentence, of ``(labels, score)`` pairs.

    Raises
    ------
    InputError
        A model with input-conditioned bigram templates (their transitions depend on the
        position; the n-best kernel takes one transition matrix).
    """
    import numpy as np

    from oracles.viterbi import split_chain_weights
    from oracles.viterbi_nbest import viterbi_nbest

    index = est.feature_index_
    if index.conditioned:
        raise InputError(
            "--nbest decodes models with a plain bigram template (B) or none; this model has input-conditioned "
            "bigram templates",
            field="--nbest",
        )
    feats = index.transform(inputs)
    K = len(est.labels_)
    W, trans = split_chain_weights(est.coef_, feats.n_features, K, transitions=index.has_transitions)
    out, ptr = [], feats.sentence_ptr
    for i in range(len(inputs)):
        t0, t1 = int(ptr[i]), int(ptr[i + 1])
        unary = np.zeros((t1 - t0, K))
        for t in range(t0, t1):  # feature by feature, in the order of the 1-best kernel's sums
            p0, p1 = feats.indptr[t], feats.indptr[t + 1]
            if feats.values is None:
                for f in feats.indices[p0:p1]:
                    unary[t - t0] += W[f]
            else:  # real-valued features (feature dicts' numbers)
                for f, v in zip(feats.indices[p0:p1], feats.values[p0:p1]):
                    unary[t - t0] += v * W[f]
        labels, scores = viterbi_nbest(unary, trans, n)
        out.append([(est.labels_.decode(y), float(s)) for y, s in zip(labels, scores)])
    return out


def predict_nbest_to(model_path, input_path, output_path, n: int, *, encoding="utf-8") -> int:
    """``cutplane predict --nbest N`` of a sequence model: CRF++'s ``-n`` output, for each
    sentence its ``N`` best labellings (fewer when it has fewer), each as ``# RANK SCORE`` (rank
    from 0; the chain's score ``sum unary + sum transition``, not a probability: the model is not
    a CRF) then the input columns with the predicted label appended, one token a line, and a
    blank line."""
    from problems.io.conll import read_conll
    from problems.sequence.model_file import TaggerModel

    est = TaggerModel.load(model_path)
    corpus = read_conll(input_path, labeled=False, encoding=encoding)
    _check_model_columns(est, corpus, input_path, model_path)
    best = nbest_labels(est, corpus.inputs, n)
    out = sys.stdout if output_path is None else open(output_path, "w", encoding=encoding)
    try:
        for rows, ranked in zip(corpus.inputs, best):
            for rank, (labels, score) in enumerate(ranked):
                out.write(f"# {rank} {score:.6f}\n")
                for row, lab in zip(rows, labels):
                    out.write(" ".join((*row, lab)) + "\n")
                out.write("\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _evaluate(task):
    def run(model_path, test_path, args) -> dict:
        """``cutplane evaluate`` of a sequence or segmentation model (``--train-words`` for R_iv)."""
        from problems.sequence.model_file import TaggerModel

        encoding = getattr(args, "encoding", "utf-8")
        words = None
        if getattr(args, "train_words", None) is not None:
            from problems.io.segmentation import read_word_list

            words = read_word_list(args.train_words, encoding=encoding)
        est = TaggerModel.load(model_path)
        return evaluate_model(est, task, test_path, train_words=words, encoding=encoding, model_path=model_path)

    return run


#: ``--task sequence``.
SEQUENCE = Task(
    "chain tagger on CoNLL / CRF++ columns (MTL^struct, SSVM or pMTL)",
    train_sequence,
    predict_to=_predict_to("sequence"),
    evaluate=_evaluate("sequence"),
    default_regularizer="mtl",
    default_eps=0.1,
    structured=True,
    encodings=True,
)
#: ``--task segment``.
SEGMENT = Task(
    "Chinese word segmentation as BMES character tagging",
    train_segment,
    predict_to=_predict_to("segment"),
    evaluate=_evaluate("segment"),
    default_regularizer="mtl",
    default_eps=0.1,
    structured=True,
    encodings=True,
)
