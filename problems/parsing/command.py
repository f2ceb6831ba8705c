"""CLI task for dependency parsing on CoNLL-U treebanks.

Registered into :mod:`problems.cli.main` when it is imported::

    cutplane train --task parse --train dev.conllu [--templates FILE] [--dev FILE] \\
        --C 1 --regularizer mtl|ssvm|pmtl [--p 1.5] [--projective] [--multi-root] \\
        [--solver cutting-plane|spom [--epochs 20] [--eta0 X] [--last-iterate] [--seed 0]] \\
        [--checkpoint PATH [--checkpoint-every K] [--resume]] [--memory-limit BYTES] \\
        [--executor serial|threads|processes|dask --workers N [--scheduler ADDRESS]] \\
        --model M.npz --report R.json
    cutplane predict --model M.npz --input test.conllu [--output out.conllu]
        (the input back in CoNLL-U with the predicted heads; DEPREL and DEPS become "_")
    cutplane evaluate --model M.npz --test test.conllu [--report R.json]
        (UAS without / with punctuation, complete-sentence accuracy)

Without ``--templates`` the built-in MSTParser-style set is used
(:data:`problems.parsing.features.DEFAULT_TEMPLATES`); a template file has one template per
line, ``name = atoms`` or ``atoms`` (:func:`problems.parsing.parser.parse_arc_templates`).
``--projective`` (Eisner) and ``--multi-root`` (the root may take several children, CoNLL-X
style; the default is one child, as Universal Dependencies require) are options this module
adds to ``train``; the solver options (``--solver``, ``--epochs``, ``--eta0``,
``--last-iterate``, ``--seed``) are the sequence tasks' (:func:`problems.sequence.command.add_solver_options`),
and so is the report (:func:`problems.sequence.command.solver_report`).
"""
from __future__ import annotations

import sys
from pathlib import Path

from cutplane.exceptions import InputError

from problems.cli.main import COMMANDS, Command, Task, engine_options, register_command, register_task
# only the names cli_sequence defines before it imports .cli (see there): the others at call time
from problems.sequence.command import EVALUATORS, SOLVER_TASKS

__all__ = ["train_parse", "evaluate_parser", "parser_report"]


def _read_templates(spec):
    if spec is None:
        return None
    path = Path(spec)
    if not path.exists():
        raise InputError(f"no template file {path}", field="--templates")
    from problems.parsing.parser import parse_arc_templates
    from problems.io._open import open_text

    with open_text(path) as fh:
        return parse_arc_templates(fh.read(), path=path)


def parser_report(est) -> dict:
    """The JSON report of a fitted :class:`~problems.parsing.parser.DependencyParser` (scale F):
    :func:`~problems.sequence.command.solver_report` (either solver) and the parser's settings."""
    from problems.sequence.command import solver_report

    return dict(solver_report(est), projective=bool(est.projective), single_root=bool(est.single_root),
                template_norms=est.template_norms_, n_features=int(est.featurizer_.dim_))


def scores_dict(scores) -> dict:
    """The figures ``evaluate`` prints, from :class:`~problems.metrics.parsing.AttachmentScores`."""
    out = {"uas": scores.uas, "uas_punct": scores.uas_punct, "complete": scores.complete,
           "complete_nopunct": scores.complete_nopunct, "n_sentences": scores.n_sentences,
           "n_words": scores.n_words, "n_words_nopunct": scores.n_words_nopunct}
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
    from problems.sequence.command import solver_options
    from problems.parsing.parser import DependencyParser
    from problems.io.conllu import read_conllu

    if args.regularizer not in ("mtl", "ssvm", "pmtl"):
        raise InputError(f"--regularizer {args.regularizer} is for linear tasks; use mtl, ssvm or pmtl",
                         field="--regularizer")
    templates = _read_templates(args.templates)
    sentences = read_conllu(args.train)
    if not sentences:
        raise InputError("no sentences", path=args.train)
    est = DependencyParser(templates, C=args.C, regularizer=args.regularizer, p=args.p,
                           projective=bool(getattr(args, "projective", False)),
                           single_root=not getattr(args, "multi_root", False), eps=args.eps,
                           max_iter=args.max_iter, min_count=args.min_count, executor=args.executor,
                           n_workers=args.workers, scheduler=args.scheduler, verbose=args.verbose,
                           **engine_options(args), **solver_options(args))
    est.fit(sentences)
    report = parser_report(est)
    report.update(n_sentences=len(sentences), n_tokens=int(sum(len(s) for s in sentences)),
                  train_uas=scores_dict(est.attachment_scores(sentences)))
    if args.dev is not None:
        report["dev"] = evaluate_parser(est, args.dev)
    from problems.sequence.command import _plots  # --plot DIR: the same figures as the sequence tasks

    _plots(est, args, report)
    return est, report


def _predict_to(model_path, input_path, output_path):
    from problems.parsing.parser import DependencyParser
    from problems.io.conllu import read_conllu, write_conllu

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


def _unsupported_predict(model_path, input_path):  # the Task API's list form; parse writes CoNLL-U
    raise InputError("parse models predict through predict_to", path=model_path)


def _evaluate(model_path, test_path, args) -> dict:
    from problems.parsing.parser import DependencyParser

    return evaluate_parser(DependencyParser.load(model_path), test_path)


register_task("parse", Task("arc-factored dependency parser on CoNLL-U (MTL^parse, SSVM or pMTL)",
                            train_parse, _unsupported_predict, _predict_to, "mtl", 0.1))
EVALUATORS["parse"] = _evaluate
SOLVER_TASKS.add("parse")


# ``train`` gains the parsing options (the other tasks ignore them).
_base_train = COMMANDS["train"]


def _add_train(p):
    _base_train.add_arguments(p)
    g = p.add_argument_group("dependency parsing (--task parse)")
    g.add_argument("--projective", action="store_true", help="projective trees only (Eisner)")
    g.add_argument("--multi-root", action="store_true", dest="multi_root",
                   help="allow several children of the root (CoNLL-X); default: exactly one (UD)")


_add_train._parse_options = True
if not getattr(_base_train.add_arguments, "_parse_options", False):
    register_command("train", Command(_base_train.help, _add_train, _base_train.run))
