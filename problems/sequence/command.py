"""CLI tasks for sequence labelling (CoNLL / CRF++ columns) and Chinese word segmentation.

Registered into :mod:`problems.cli.main` when it is imported::

    cutplane train --task sequence --templates T.tpl --train train.txt [--dev dev.txt] \\
        --C 10 --regularizer mtl|ssvm|pmtl [--p 1.5] --model M.npz --report R.json \\
        [--solver cutting-plane|spom [--epochs 20] [--eta0 X] [--last-iterate] [--seed 0]]
    cutplane train --task segment --train words.txt [--templates tp1|tp2|FILE] ...
    cutplane predict --model M.npz --input FILE [--output OUT]     (the input format back,
        with the predicted column appended / the text segmented)
    cutplane evaluate --model M.npz --test FILE [--report R.json]  (chunk F1, or segmentation
        P/R/F1 and R_iv, or token accuracy)

``--solver`` chooses between the two solvers of the same ``F`` offered by the structured
estimators (:class:`~problems.template_learning.TemplateLearnerMixin`): the cutting-plane
engine (default, certified gap) and SPOM (the online baseline, ``--epochs``, ``--eta0``,
``--last-iterate``, ``--seed``; no certificate: the report's ``lower_bound`` and ``gap`` are
null). These options are declared once here (:func:`add_solver_options`) for every task in
:data:`SOLVER_TASKS` (the parse task adds itself).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from cutplane.exceptions import InputError

# task -> evaluate(model_path, test_path, args) -> dict of scores, for tasks of other modules
# (e.g. problems.parsing.command). Defined before importing .cli: under ``python -m problems.cli.main``
# that import re-enters problems.cli.main, which imports those modules while this one is partial.
EVALUATORS: dict = {}
#: Tasks whose estimator takes ``--solver`` (a structured estimator of TemplateLearnerMixin).
SOLVER_TASKS: set = {"sequence", "segment"}

from problems.cli.main import COMMANDS, TASKS, Command, Task, engine_options, register_command, register_task  # noqa: E402

__all__ = ["train_sequence", "train_segment", "evaluate_model", "tagger_report", "solver_report",
           "add_solver_options", "solver_options", "EVALUATORS", "SOLVER_TASKS"]

_SCHEME = "BMES"


def _templates_text(spec, default):
    """A named template set (a key of ``problems.sequence.template_sets.TEMPLATE_SETS``), a file, or the task's default."""
    from problems.sequence.template_sets import TEMPLATE_SETS

    if spec is None:
        return TEMPLATE_SETS[default]
    if str(spec).lower() in TEMPLATE_SETS:
        return TEMPLATE_SETS[str(spec).lower()]
    path = Path(spec)
    if not path.exists():
        raise InputError(f"no template file {path} (or a set name: {sorted(TEMPLATE_SETS)})",
                         field="--templates")
    from problems.io._open import open_text

    with open_text(path) as fh:
        text = fh.read()
    from problems.sequence.templates import parse_templates

    parse_templates(text, path=path)  # errors name the template file and line
    return text


def solver_report(est) -> dict:
    """The training figures of a fitted structured estimator (scale ``F``), for either solver.

    Both: ``objective``, ``lower_bound`` and ``gap`` (null for SPOM, which certifies nothing),
    ``iterations`` (engine iterations or SPOM epochs), ``status``, ``converged`` (a certified
    gap <= eps), ``time_s``, ``solver``, the regulariser and the template weights. The
    cutting-plane solver adds its oracle / reduced-solver times, backend, exactness, peak
    working-set bytes and the bounds per iteration; SPOM its step size, averaging, seed and
    the objective per evaluation (passes, seconds).
    """
    res, C = est.result_, float(est.C)
    hist = res.history
    out = {
        "objective": est.objective_, "lower_bound": est.lower_bound_, "gap": est.gap_, "eps": float(est.eps),
        "C": C, "iterations": est.n_iter_, "status": res.status, "converged": res.status == "converged",
        "time_s": float(res.time_s), "solver": est.solver or "cutting-plane",
        "regularizer": est.regularizer, "p": float(est.p),
        "n_templates": len(est.template_weights_), "n_active_templates": est.n_active_templates_,
        "active_templates": est.active_templates_, "template_weights": est.template_weights_,
    }
    if est.lower_bound_ is None:  # SPOM
        out.update(epochs=int(res.epochs), eta0=float(res.eta0), averaged=bool(res.averaged), seed=est.seed,
                   eval_time_s=float(res.eval_time_s), tune_time_s=float(res.tune_time_s),
                   history={"passes": hist.passes.tolist(), "objective": (C * hist.objective).tolist(),
                            "train_time": hist.train_time.tolist(), "wall_time": hist.wall_time.tolist()})
        return out
    out.update(
        oracle_time_s=float(res.oracle_time_s), solver_time_s=float(res.solver_time_s), backend=res.backend,
        exact=bool(res.exact), peak_working_set_bytes=int(getattr(res, "peak_working_set_bytes", 0)),
        history={"upper": (C * hist.upper).tolist(), "best_upper": (C * hist.best_upper).tolist(),
                 "lower": (C * hist.lower).tolist(), "gap": (C * hist.gap).tolist(),
                 "oracle_time": hist.oracle_time.tolist(), "solver_time": hist.solver_time.tolist(),
                 "n_cuts": hist.n_cuts.tolist()})
    return out


def tagger_report(est) -> dict:
    """The JSON report of a fitted :class:`~problems.sequence.tagger.SequenceTagger` (scale F):
    :func:`solver_report` and the feature and label counts."""
    return dict(solver_report(est), n_features=int(est.feature_index_.n_features_), n_labels=len(est.labels_))


def add_solver_options(p):
    """Declare ``--solver``, ``--epochs``, ``--eta0``, ``--last-iterate`` and ``--seed`` on ``p``."""
    from problems.cli.main import _positive_float, _positive_int
    from problems.template_learning import SOLVERS

    g = p.add_argument_group("structured solver (--task " + "|".join(sorted(SOLVER_TASKS)) + ")")
    g.add_argument("--solver", choices=SOLVERS, default="cutting-plane",
                   help="cutting-plane (certified gap, default) or spom (online proximal baseline, no certificate)")
    g.add_argument("--epochs", type=_positive_int, default=20, help="SPOM: passes over the data (default 20)")
    g.add_argument("--eta0", type=_positive_float, default=None,
                   help="SPOM: step size eta_t = eta0 / sqrt(t) (default: tuned on a subsample)")
    g.add_argument("--last-iterate", action="store_true", dest="last_iterate",
                   help="SPOM: return the last iterate instead of the averaged model")
    g.add_argument("--seed", type=int, default=0, help="SPOM: seed of the epoch orders (default 0)")


def solver_options(args) -> dict:
    """The estimators' ``solver``, ``epochs``, ``eta0``, ``averaged`` and ``seed`` from ``train``'s options."""
    return dict(solver=args.solver, epochs=args.epochs, eta0=args.eta0, averaged=not args.last_iterate,
                seed=args.seed)


def _fit_tagger(args, templates, X, y):
    from problems.sequence.tagger import SequenceTagger

    reg = args.regularizer if args.regularizer in ("mtl", "ssvm", "pmtl") else None
    if reg is None:
        raise InputError(f"--regularizer {args.regularizer} is for linear tasks; use mtl, ssvm or pmtl",
                         field="--regularizer")
    est = SequenceTagger(templates, C=args.C, regularizer=reg, p=args.p, eps=args.eps, max_iter=args.max_iter,
                         min_count=args.min_count, executor=args.executor, n_workers=args.workers,
                         scheduler=args.scheduler, verbose=args.verbose, **engine_options(args),
                         **solver_options(args))
    return est.fit(X, y)


def _plots(est, args, report):
    """``--plot DIR``: template weights (sorted, log scale) and, for the cutting-plane solver, the
    bounds per iteration."""
    if getattr(args, "plot", None) is None:
        return
    from problems.plots import matplotlib_available, plot_bounds, plot_template_weights

    if not matplotlib_available():
        raise InputError("--plot needs matplotlib (pip install cutplane[plot])", field="--plot")
    args.plot.mkdir(parents=True, exist_ok=True)
    report["plots"] = [str(plot_template_weights(est.template_norms_, args.plot / "template_weights.png",
                                                 title=f"{est.regularizer} ||w_j||"))]
    if est.lower_bound_ is not None:  # SPOM has no bounds to draw
        report["plots"].append(str(plot_bounds(est.result_.history, args.plot / "bounds.png", scale=float(est.C),
                                               title=f"{est.regularizer}, C={est.C:g}")))


def _dev_scores(est, task, path):
    if path is None:
        return {}
    return {"dev": evaluate_model(est, task, path)}


def train_sequence(args):
    """``--task sequence``: CoNLL / CRF++ columns, label in the last column."""
    from problems.io.conll import read_conll

    if args.templates is None:
        raise InputError("--task sequence needs --templates (a CRF++ template file or 'chunking')",
                         field="--templates")
    corpus = read_conll(args.train)
    est = _fit_tagger(args, _templates_text(args.templates, "chunking"), corpus.inputs, corpus.labels)
    report = tagger_report(est)
    report.update(n_sentences=corpus.n_sentences, n_tokens=corpus.n_tokens, **_dev_scores(est, "sequence", args.dev))
    _plots(est, args, report)
    return est, report


def train_segment(args):
    """``--task segment``: segmented text (words separated by spaces) -> BMES character tags."""
    from problems.io.segmentation import read_segmented_as_tags

    corpus = read_segmented_as_tags(args.train, _SCHEME)
    est = _fit_tagger(args, _templates_text(args.templates, "tp1"), corpus.inputs, corpus.labels)
    report = tagger_report(est)
    report.update(n_sentences=corpus.n_sentences, n_chars=corpus.n_tokens, **_dev_scores(est, "segment", args.dev))
    _plots(est, args, report)
    return est, report


def evaluate_model(est, task, path, *, train_words=None) -> dict:
    """The task metric of a fitted tagger on a labelled file."""
    if task == "segment":
        from problems.io.segmentation import read_segmented, tags_to_words, words_to_tags
        from problems.metrics.segmentation import segmentation_scores

        gold = read_segmented(path)
        inputs = [[(c,) for c in words_to_tags(words, _SCHEME)[0]] for words in gold]
        pred_tags = est.predict(inputs)
        pred = [tags_to_words([row[0] for row in x], t, _SCHEME) for x, t in zip(inputs, pred_tags)]
        score = segmentation_scores(gold, pred, train_words) if train_words is not None else \
            segmentation_scores(gold, pred)
        from dataclasses import asdict

        return asdict(score)
    from problems.io.conll import read_conll
    from problems.metrics.chunking import chunk_f1

    from problems.validation import warn_unseen_labels

    corpus = read_conll(path)
    warn_unseen_labels(corpus.labels, est.labels_.labels, path=path)
    pred = est.predict(corpus.inputs)
    s = chunk_f1(corpus.labels, pred)
    return {"precision": s.precision, "recall": s.recall, "f1": s.f1, "accuracy": s.accuracy,
            "n_sentences": corpus.n_sentences, "n_tokens": corpus.n_tokens}


def _predict_to(task):
    def run(model_path, input_path, output_path):
        from problems.sequence.tagger import SequenceTagger

        est = SequenceTagger.load(model_path)
        out = sys.stdout if output_path is None else open(output_path, "w", encoding="utf-8")
        try:
            if task == "segment":
                from problems.io.segmentation import iter_segmented, tags_to_words

                for _, words in iter_segmented(input_path):
                    chars = [c for wd in words for c in wd]
                    tags = est.predict([[(c,) for c in chars]])[0] if chars else []
                    out.write(" ".join(tags_to_words(chars, tags, _SCHEME)) + "\n")
            else:
                from problems.io.conll import read_conll

                corpus = read_conll(input_path, labeled=False)
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


def _unsupported_predict(model_path, input_path):  # the Task API's list form; sequence tasks write files
    raise InputError("sequence models predict through predict_to", path=model_path)


register_task("sequence", Task("chain tagger on CoNLL / CRF++ columns (MTL^struct, SSVM or pMTL)",
                               train_sequence, _unsupported_predict, _predict_to("sequence"), "mtl", 0.1))
register_task("segment", Task("Chinese word segmentation as BMES character tagging",
                              train_segment, _unsupported_predict, _predict_to("segment"), "mtl", 0.1))


def _add_evaluate(p):
    p.add_argument("--model", required=True, type=Path, help="model file written by train")
    p.add_argument("--test", required=True, type=Path, help="labelled test file in the task's format")
    p.add_argument("--train-words", type=Path, dest="train_words",
                   help="segmentation: training word list, for the in-vocabulary recall R_iv")
    p.add_argument("--report", type=Path, help="write the metric here as JSON")


def _run_evaluate(args):
    from problems.model_io import load_model
    from problems.sequence.tagger import SequenceTagger

    meta = load_model(args.model).meta
    task = meta.get("task")
    if task in EVALUATORS:
        scores = EVALUATORS[task](args.model, args.test, args)
    elif task not in ("sequence", "segment"):
        raise InputError(f"evaluate supports {sorted({'sequence', 'segment', *EVALUATORS})} models, "
                         f"this one is {task!r}", path=args.model, field="task")
    else:
        words = None
        if args.train_words is not None:
            from problems.io.segmentation import read_word_list

            words = read_word_list(args.train_words)
        scores = evaluate_model(SequenceTagger.load(args.model), task, args.test, train_words=words)
    sys.stdout.write(" ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in scores.items()) + "\n")
    if args.report is not None:
        args.report.write_text(json.dumps({"task": task, "test_file": str(args.test), **scores}, indent=2) + "\n")
    return 0


register_command("evaluate", Command("score a trained model on a labelled file", _add_evaluate, _run_evaluate))


# ``train`` gains the solver options of the structured tasks (the linear tasks refuse them).
_base_train = COMMANDS["train"]
_SPOM_REFUSED = (("--checkpoint", "checkpoint", None), ("--resume", "resume", False),
                 ("--memory-limit", "memory_limit", None))


def _add_train(p):
    _base_train.add_arguments(p)
    add_solver_options(p)


def _run_train(args):
    if args.task not in SOLVER_TASKS:
        if args.solver != "cutting-plane":
            raise InputError(f"--solver {args.solver} is for the tasks {sorted(SOLVER_TASKS)}, not {args.task!r}",
                             field="--solver")
        return _base_train.run(args)
    if args.solver != "spom":
        return _base_train.run(args)
    given = [opt for opt, attr, default in _SPOM_REFUSED if getattr(args, attr) != default]
    if given:
        raise InputError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --solver cutting-plane only (SPOM keeps no working set "
                         "and writes no checkpoint)", field=given[0])
    return _base_train.run(args)


_add_train._solver_options = True
if not getattr(_base_train.add_arguments, "_solver_options", False):
    register_command("train", Command(_base_train.help, _add_train, _run_train))
