"""CLI task for dependency parsing on CoNLL-U treebanks.

::

    cutplane train --task parse --train dev.conllu [--templates FILE] [--dev FILE | --dev-fraction F] \\
        [--C auto | --C 30 100 1000 | --C 100] [--time-limit S] \\
        --regularizer mtl|ssvm|pmtl [--p 1.5] [--projective] [--multi-root] \\
        [--solver cutting-plane|spom [--epochs 20] [--eta0 X] [--last-iterate] [--seed 0]] \\
        [--checkpoint PATH [--checkpoint-every K] [--resume]] [--memory-limit BYTES] \\
        [--executor serial|threads|processes|dask --workers N [--scheduler ADDRESS]] \\
        --model M.npz --report R.json
    cutplane predict --model M.npz --input test.conllu [--output out.conllu]
        (the input back in CoNLL-U with the predicted heads; DEPREL and DEPS become "_")
    cutplane evaluate --model M.npz --test test.conllu [--report R.json]
        (UAS without / with punctuation, complete-sentence accuracy)

``--C`` is ``auto`` unless given (the regulariser's grid, chosen by UAS on ``--dev`` or on
``--dev-fraction``, default 0.1, of the training trees). Without ``--templates`` the built-in
MSTParser-style set is used
(:data:`problems.parsing.features.DEFAULT_TEMPLATES`); a template file has one template per
line, ``name = atoms`` or ``atoms`` (:func:`problems.parsing.parser.parse_arc_templates`).
``--projective`` (Eisner) and ``--multi-root`` (the root may take several children, CoNLL-X
style; the default is one child, as Universal Dependencies require) are this task's own
``train`` options (:func:`add_arguments`, the decoder :class:`~problems.parsing.parser.TreeDecoder`);
the solver options (``--solver``, ``--epochs``, ``--eta0``, ``--last-iterate``, ``--seed``) and
the report are those of every structured task (:mod:`problems.command_options`). The
:class:`~problems.command_options.Task` record :data:`PARSE` is listed in the CLI's task table
(:data:`problems.cli.tasks.TASKS`).
"""

from __future__ import annotations

import sys
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
    percent,
    selection_report,
    solver_report,
    write_plots,
)

__all__ = ["train_parse", "evaluate_parser", "parser_report", "scores_dict", "add_arguments", "PARSE"]


def _read_templates(spec):
    if spec is None:
        return None
    path = Path(spec)
    if not path.exists():
        raise InputError(f"no template file {path}", field="--templates")
    from problems.io._open import open_text
    from problems.parsing.features import parse_arc_templates

    with open_text(path) as fh:
        return parse_arc_templates(fh.read(), path=path)


def parser_report(est, *, dev_file=None) -> dict:
    """The JSON report of a fitted :class:`~problems.parsing.parser.DependencyParser` (scale F):
    :func:`~problems.command_options.solver_report` (either solver; the model at the chosen C),
    the choice of C (:func:`~problems.command_options.selection_report`) and the parser's
    settings."""
    decoder = est.decoder.get_params() if est.decoder is not None else {"projective": False, "single_root": True}
    return dict(
        solver_report(est),
        **selection_report(est, source_file=dev_file),
        projective=bool(decoder["projective"]),
        single_root=bool(decoder["single_root"]),
        template_norms=est.template_norms_,
        n_features=int(est.featurizer_.dim_),
    )


def scores_dict(scores) -> dict:
    """The figures ``evaluate`` prints, from :class:`~problems.metrics.parsing.AttachmentScores`:
    the scores in percent (the metric's fractions times 100, as every score of the CLI), the
    counts as they are."""
    out = {
        "uas": percent(scores.uas),
        "uas_punct": percent(scores.uas_punct),
        "complete": percent(scores.complete),
        "complete_nopunct": percent(scores.complete_nopunct),
        "n_sentences": scores.n_sentences,
        "n_words": scores.n_words,
        "n_words_nopunct": scores.n_words_nopunct,
    }
    return {k: v for k, v in out.items() if v is not None}


def evaluate_parser(est, path) -> dict:
    """UAS (without / with punctuation) and complete accuracy of a fitted parser on a CoNLL-U file."""
    from problems.io.conllu import read_conllu

    sentences = read_conllu(path)
    if not sentences:
        raise InputError("no sentences", path=path)
    return scores_dict(est.attachment_scores(sentences))


def train_parse(args):
    """``--task parse``: CoNLL-U with gold heads."""
    from problems.io.conllu import read_conllu
    from problems.parsing.parser import DependencyParser, DependencyParserCV, TreeDecoder

    if args.regularizer not in STRUCTURED_REGULARIZERS:
        raise InputError(
            f"--regularizer {args.regularizer} is for linear tasks; use mtl, ssvm or pmtl", field="--regularizer"
        )
    templates = _read_templates(args.templates)
    sentences = read_conllu(args.train)
    if not sentences:
        raise InputError("no sentences", path=args.train)
    check_holdout(args, len(sentences), "sentences")
    decoder = TreeDecoder(
        projective=bool(getattr(args, "projective", False)), single_root=not getattr(args, "multi_root", False)
    )
    common = dict(
        regularizer=args.regularizer,
        p=args.p,
        decoder=decoder,
        min_count=1 if args.min_count is None else args.min_count,
        solver=make_solver(args, method=getattr(args, "method", None)),
    )
    if chooses_C(args):  # --C auto (the default), several values, or --dev-fraction
        est = DependencyParserCV(templates, **cv_estimator_kwargs(args), **common)
        est.fit(sentences, **cv_fit_kwargs(args, _read_dev))
    else:
        est = DependencyParser(templates, C=args.C, **common)
        est.fit(sentences)
    report = parser_report(est, dev_file=args.dev)
    report.update(
        n_sentences=len(sentences),
        n_tokens=int(sum(len(s) for s in sentences)),
        train_uas=scores_dict(est.attachment_scores(sentences)),
    )
    if args.dev is not None:
        report["dev"] = evaluate_parser(est, args.dev)
    write_plots(est, args, report)  # --plot DIR: the same figures as the sequence tasks
    return est, report


def _read_dev(path):
    from problems.io.conllu import read_conllu

    sentences = read_conllu(path)
    if not sentences:
        raise InputError("no sentences", path=path)
    return sentences


def _predict_to(model_path, input_path, output_path):
    from problems.io.conllu import read_conllu, write_conllu
    from problems.parsing.parser import DependencyParser

    est = DependencyParser.load(model_path)
    sentences = read_conllu(input_path, allow_missing_heads=True)
    heads = est.predict(sentences) if sentences else []
    if output_path is not None:
        write_conllu(output_path, sentences, heads)
        return 0
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pred.conllu"
        write_conllu(out, sentences, heads)
        sys.stdout.write(out.read_text(encoding="utf-8"))
    return 0


def _evaluate(model_path, test_path, args) -> dict:
    from problems.parsing.parser import DependencyParser

    return evaluate_parser(DependencyParser.load(model_path), test_path)


def add_arguments(p):
    """The parse task's own ``train`` options: ``--projective`` and ``--multi-root``."""
    g = p.add_argument_group("dependency parsing (--task parse)")
    g.add_argument("--projective", action="store_true", help="projective trees only (Eisner)")
    g.add_argument(
        "--multi-root",
        action="store_true",
        dest="multi_root",
        help="allow several children of the root (CoNLL-X); default: exactly one (UD)",
    )


#: ``--task parse``.
PARSE = Task(
    "arc-factored dependency parser on CoNLL-U (MTL^parse, SSVM or pMTL)",
    train_parse,
    predict_to=_predict_to,
    evaluate=_evaluate,
    default_regularizer="mtl",
    default_eps=0.1,
    structured=True,
    add_arguments=add_arguments,
)
