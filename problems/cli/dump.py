"""``cutplane dump``: a sequence model's weights as text (CRF++'s ``crf_learn -t``).

::

    cutplane dump --model M.npz [--output M.txt] [--all]

The text holds a header of ``# key: value`` lines (task, labels, the templates, or the feature
keys of a model fitted on feature dicts, the number of features and the certificate of the
training), then one weight a line, tab-separated:

- ``FEATURE<TAB>LABEL<TAB>WEIGHT``: a unigram feature (its template and text, as CRF++ names
  them, e.g. ``U01:the``) and a label;
- ``B<TAB>PREVIOUS LABEL<TAB>LABEL<TAB>WEIGHT``: a transition (plain ``B`` template);
- ``FEATURE<TAB>PREVIOUS LABEL<TAB>LABEL<TAB>WEIGHT``: an input-conditioned bigram feature.

Weights of zero are left out unless ``--all`` (MTL^struct zeroes whole templates). Weights are
written with ``repr``: reading them back gives the same float64 numbers.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cutplane.exceptions import InputError
from problems.command_options import Command

__all__ = ["add_arguments", "run", "dump_lines", "COMMAND"]


def add_arguments(p):
    """``dump``'s options."""
    p.add_argument("--model", required=True, type=Path, help="a sequence model file written by train")
    p.add_argument("--output", type=Path, help="where to write the text (default stdout)")
    p.add_argument("--all", action="store_true", help="write the weights of zero too")


def dump_lines(est, *, zeros: bool = False):
    """The lines of the text dump of a fitted :class:`~problems.sequence.tagger.SequenceTagger` or
    a :class:`~problems.sequence.model_file.TaggerModel`."""
    import numpy as np

    index = est.feature_index_
    labels = list(est.labels_.labels)
    K = len(labels)
    yield f"# labels: {' '.join(labels)}\n"
    if est.templates is None:  # fitted on feature dicts: their keys are the groups
        for key in index.keys_:
            yield f"# feature key: {key}\n"
    else:
        for t in index.templates:
            yield f"# template: {t.text}\n"
    yield f"# features: {index.n_features_}\n"
    for key in ("objective", "lower_bound", "gap"):
        yield f"# {key}: {getattr(est, key + '_', None)!r}\n"
    coef = np.asarray(est.coef_, dtype=np.float64)
    F = index.n_features_
    W = coef[: F * K].reshape(F, K)
    for name, row in zip(index.feature_names(), W):
        for lab, v in zip(labels, row):
            if zeros or v != 0.0:
                yield f"{name}\t{lab}\t{float(v)!r}\n"
    rest = coef[F * K :]
    if index.has_transitions:
        T = rest[: K * K].reshape(K, K)
        for a in range(K):
            for b in range(K):
                if zeros or T[a, b] != 0.0:
                    yield f"B\t{labels[a]}\t{labels[b]}\t{float(T[a, b])!r}\n"
    elif index.conditioned:
        WB = rest.reshape(-1, K, K)
        for name, block in zip(index.bigram_feature_names(), WB):
            for a in range(K):
                for b in range(K):
                    if zeros or block[a, b] != 0.0:
                        yield f"{name}\t{labels[a]}\t{labels[b]}\t{float(block[a, b])!r}\n"


def run(args):
    """Write the dump of a sequence or segment model."""
    from problems.model_io import load_model

    meta = load_model(args.model).meta
    task = meta.get("task")
    if task not in ("sequence", "segment"):
        raise InputError(
            f"dump writes the weights of sequence and segment models (CRF++'s -t); this is a {task} model",
            path=args.model,
            field="task",
        )
    from problems.cli.output_paths import check_not_input, check_output_file
    from problems.sequence.model_file import TaggerModel

    check_output_file(args.output, "--output")
    check_not_input(args.output, (args.model,), "--output")
    est = TaggerModel.load(args.model)  # read without scikit-learn
    lines = dump_lines(est, zeros=args.all)
    if args.output is None:
        sys.stdout.write(f"# task: {task}\n")
        sys.stdout.writelines(lines)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(f"# task: {task}\n")
            f.writelines(lines)
    return 0


#: The ``dump`` subcommand.
COMMAND = Command("write a sequence model's weights as text (CRF++'s -t)", add_arguments, run)
