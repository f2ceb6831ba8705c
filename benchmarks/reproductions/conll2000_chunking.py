"""CoNLL-2000 chunking: MTL^struct vs the 1-slack structural SVM (and SPOM) on the CRF++ chunking templates.

Trains on ``conll2000-chunking/train.txt.gz`` and scores chunk F1 (conlleval semantics) on
``test.txt.gz`` from the data folder (``$CUTPLANE_DATA`` or ``../shared/data``), with the
21 U templates + B of ``shared/ANCHORS.md`` (460,638 features, 22 labels in train). For every
method and C it reports the test F1, training time, iterations, the certified gap, the active
templates and memory; the table goes to ``docs/results/conll2000_chunking.md`` (and JSON beside
it) straight from the run (driver: ``benchmarks/reproductions/sequence_experiment.py``).

    python -m benchmarks.reproductions.conll2000_chunking --C 100 --methods mtl ssvm
    python -m benchmarks.reproductions.conll2000_chunking --max-sentences 500 --C 10   # a quick look
    python -m benchmarks.reproductions.conll2000_chunking --templates chunking_ext --C 10000 --methods mtl \
        --out docs/results/conll2000_chunking_ext.md   # 11 more (redundant) templates

``--eps`` is the certified absolute tolerance on ``F = Omega + C * mean loss`` as a fraction of
``C`` (SVM^hmm's ``-e`` is the same kind of number: its duality gap is about ``C * e``).
"""

from __future__ import annotations

import sys

from benchmarks.reproductions.sequence_experiment import ROOT, parser, render, run
from problems.datasets import dataset_path
from problems.io.conll import read_conll
from problems.sequence.template_sets import CHUNKING, CHUNKING_EXT

TEMPLATES = {
    "chunking": (CHUNKING, "CRF++ chunking templates (21 U + B)"),
    "chunking_ext": (
        CHUNKING_EXT,
        "CRF++ chunking templates plus 11 word bi-gram and "
        "word x POS templates (32 U + B, `problems.sequence.template_sets.CHUNKING_EXT`)",
    ),
}


def main(argv=None):
    ap = parser(__doc__.splitlines()[0], ROOT / "docs" / "results" / "conll2000_chunking.md")
    ap.set_defaults(target_f1=93.5)
    ap.add_argument(
        "--templates",
        choices=sorted(TEMPLATES),
        default="chunking",
        help="template set (default: chunking, the CRF++ example of shared/ANCHORS.md)",
    )
    args = ap.parse_args(argv)
    templates, described = TEMPLATES[args.templates]
    args.target_source = "issue 4, MTL^struct on CoNLL-2000"
    title, description = "CoNLL-2000 chunking: MTL^struct vs SSVM", f"{described}. Chunk F1 with conlleval semantics."
    if args.render:
        return render(args.render, args.out, argv, "conll2000_chunking.py", title, description)
    train = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"))
    test = read_conll(dataset_path("conll2000-chunking", "test.txt.gz"))
    return run(args, argv, "conll2000_chunking.py", train, test, None, templates, title, description)


if __name__ == "__main__":
    sys.exit(main())
