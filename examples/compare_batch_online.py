"""Batch MTL^struct (cutting planes, certified gap) against online SPOM on the same tasks.

Runs ``cutplane compare`` on

1. the generated tagging task of :func:`problems.synthetic.make_tagging_task` (always);
2. CoNLL-2002 Spanish NER (train ``esp.train``, test ``esp.testa``) and CoNLL-2000 chunking,
   with the CRF++ chunking template set (words and POS), when the data folder is present
   (``CUTPLANE_DATA``, else ``~/cutplane_data``); ``--max-train`` limits the training sentences.

Each run writes ``<out>/<name>/report.json`` (+ ``report.md``) and the PNG curves (objective
vs time and vs passes, test metric vs time) beside them, and prints the table.

Usage::

    python examples/compare_batch_online.py --out runs/compare [--real] [--max-train 2000] \\
        [--C 10] [--epochs 20] [--time-limit 600]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _write(path, X, y):
    from problems.io.conll import write_columns

    write_columns(path, [[row + (lab,) for row, lab in zip(x, ys)] for x, ys in zip(X, y)])


def run(name, train, test, templates, out, args, extra=()):
    from problems.cli.main import main

    folder = Path(out) / name
    folder.mkdir(parents=True, exist_ok=True)
    argv = [
        "compare",
        "--task",
        "sequence",
        "--templates",
        str(templates),
        "--train",
        str(train),
        "--test",
        str(test),
        "--C",
        str(args.C),
        "--epochs",
        str(args.epochs),
        "--eps",
        str(args.eps),
        "--report",
        str(folder / "report.json"),
        "--out",
        str(folder),
        *extra,
    ]
    if args.max_train:
        argv += ["--max-train", str(args.max_train)]
    if args.time_limit is not None:
        argv += ["--time-limit", f"{args.time_limit:g}"]
    sys.stdout.write(f"\n== {name}\n")
    return main(argv)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/compare"))
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--eps", type=float, default=0.01, help="MTL^struct's certified tolerance on F")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--real", action="store_true", help="also CoNLL-2002 Spanish and CoNLL-2000")
    parser.add_argument("--max-train", type=int, default=None, dest="max_train")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=None,
        dest="time_limit",
        help="seconds per method of each comparison (cutplane compare's --time-limit)",
    )
    args = parser.parse_args(argv)

    from problems.synthetic import make_tagging_task

    task = make_tagging_task(
        n_train=300, n_test=200, length=10, n_labels=3, n_informative=2, n_noise=4, signal=0.6, seed=1
    )
    gen = args.out / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    _write(gen / "train.txt", task.X_train, task.y_train)
    _write(gen / "test.txt", task.X_test, task.y_test)
    (gen / "templates.txt").write_text(task.templates)
    codes = [run("generated", gen / "train.txt", gen / "test.txt", gen / "templates.txt", args.out, args)]

    if args.real:
        from problems.datasets import data_home

        home = data_home()
        if home is None:
            sys.stdout.write("datasets absent (CUTPLANE_DATA, else ~/cutplane_data): real runs skipped\n")
        else:
            es = home / "conll2002-ner-es"
            codes.append(run("conll2002-es", es / "esp.train.gz", es / "esp.testa.gz", "chunking", args.out, args))
            ch = home / "conll2000-chunking"
            codes.append(run("conll2000", ch / "train.txt.gz", ch / "test.txt.gz", "chunking", args.out, args))
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
