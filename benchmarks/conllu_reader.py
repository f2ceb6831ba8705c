"""The CoNLL-U reader: the package's own (``problems.io.conllu``) against the ``conllu`` library.

Question (issue 36): should ``problems.io.conllu`` be built on the ``conllu`` library? Only if it
keeps the reader's errors (each naming the file and the line) and is not slower. Measured here:

1. Errors: each malformed input of ``tests/problems/test_io_conllu.py`` and
   ``tests/problems/test_hostile_input.py``, read by ``read_conllu`` (the message and the line it
   names) and by ``conllu.parse_incr`` (its exception, or "accepted" when it reads the input
   without complaint).
2. Speed: CPU seconds (best of ``--repeat``; the machine is shared) to read each UD Danish-DDT
   file of the data home into ``ConlluSentence`` objects, by ``read_conllu`` and by two readers
   on the library: ``parse_incr`` over :func:`problems.io._open.open_text` (the package's strict
   line-numbered decoding, so that bad bytes still name their line) and over ``gzip.open`` (the
   library at its fastest). Both library readers convert its token lists to the same
   ``ConlluSentence`` objects (checked equal to ``read_conllu``'s) and do *none* of the
   reader's checks (IDs, column counts, heads, cycles): they are lower bounds of the cost of a
   library-based reader that kept them.

Run: ``python -m benchmarks.conllu_reader [--repeat 5]`` (needs the ``conllu`` library:
``pip install conllu``, or the ``bench`` extra); writes ``docs/results/conllu_reader.md``.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._timing import best_of, fixed

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results" / "conllu_reader.md"
FILES = ("da_ddt-ud-dev.conllu.gz", "da_ddt-ud-test.conllu.gz")


def _line(form, head, tid):
    return f"{tid}\t{form}\t{form}\tNOUN\t_\t_\t{head}\tdep\t_\t_\n"


#: (what, file text): the malformed inputs of the reader's tests.
MALFORMED = [
    ("head out of range", _line("a", 0, 1) + _line("b", 7, 2) + _line("c", 1, 3)),
    ("cycle 2 -> 3 -> 2", _line("a", 0, 1) + _line("b", 3, 2) + _line("c", 2, 3)),
    ("word its own head", _line("a", 1, 1)),
    ("non-integer head x", _line("a", 0, 1) + _line("b", "x", 2)),
    ("head 1_0", _line("a", 1, 1).replace("\t1\tdep", "\t1_0\tdep")),
    ("head \u00b2 (superscript)", _line("a", "\u00b2", 1)),
    ("ID \u00b9 (superscript)", _line("a", 0, "\u00b9")),
    ("ID 01", _line("a", 0, "01")),
    ("9 columns", _line("a", 0, 1) + "2\tb\tb\tNOUN\t_\t_\t1\tdep\t_\n"),
    ("columns split by two spaces", _line("a", 0, 1).replace("\t", "  ")),
    ("IDs 1, 3", _line("a", 0, 1) + _line("b", 1, 3)),
    ("comment inside a sentence", _line("a", 0, 1) + "# oops\n" + _line("b", 1, 2)),
    ("invalid UTF-8", _line("a", 0, 1) + "\udcff"),
]


def _library():
    try:
        import conllu
    except ImportError:  # pragma: no cover - the bench extra
        raise SystemExit("this comparison needs the conllu library: pip install conllu") from None
    return conllu


def _raw(line, i):
    return line[i]


def _parse_incr(stream):
    """``conllu.parse_incr`` keeping FEATS, DEPS and MISC as written (as ``read_conllu`` does)."""
    conllu = _library()
    return conllu.parse_incr(stream, field_parsers={"feats": _raw, "deps": _raw, "misc": _raw})


def _sentences(token_lists, path):
    """``ConlluSentence`` objects from the library's token lists (basic words only, no checks)."""
    from problems.io.conllu import ConlluSentence

    out = []
    for tl in token_lists:
        words = [t for t in tl if isinstance(t["id"], int)]
        heads = np.fromiter((t["head"] for t in words), dtype=np.int64, count=len(words))
        out.append(
            ConlluSentence(
                forms=[t["form"] for t in words],
                lemmas=[t["lemma"] for t in words],
                upos=[t["upos"] for t in words],
                xpos=[t["xpos"] or "_" for t in words],
                feats=[t["feats"] for t in words],
                heads=heads,
                deprels=[t["deprel"] for t in words],
                deps=[t["deps"] for t in words],
                misc=[t["misc"] for t in words],
                comments=[f"{k} = {v}" for k, v in tl.metadata.items()],
                path=path,
            )
        )
    return out


def read_ours(path):
    from problems.io.conllu import read_conllu

    return read_conllu(path)


def read_library_strict(path):
    from problems.io._open import open_text

    with open_text(path) as f:
        return _sentences(_parse_incr(f), str(path))


def read_library_fast(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return _sentences(_parse_incr(f), str(path))


READERS = [
    ("read_conllu (this package)", read_ours),
    ("conllu.parse_incr over open_text", read_library_strict),
    ("conllu.parse_incr over gzip.open", read_library_fast),
]


def _same(a, b) -> bool:
    return len(a) == len(b) and all(
        (x.forms, x.lemmas, x.upos, x.xpos, x.feats, x.deprels, x.deps, x.misc, x.sent_id)
        == (y.forms, y.lemmas, y.upos, y.xpos, y.feats, y.deprels, y.deps, y.misc, y.sent_id)
        and np.array_equal(x.heads, y.heads)
        for x, y in zip(a, b)
    )


def errors():
    """Rows ``(what, ours, line ours names or None, library)`` for the malformed inputs."""
    from cutplane.exceptions import InputError
    from problems.io.conllu import read_conllu

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for what, text in MALFORMED:
            path = Path(tmp) / "bad.conllu"
            path.write_bytes(("# sent_id = 1\n" + text).encode("utf-8", "surrogateescape"))
            line = None
            try:
                read_conllu(path)
                ours = "accepted"
            except InputError as exc:
                ours, line = str(exc).replace(str(path), path.name), exc.line
            try:
                with open(path, encoding="utf-8") as f:
                    list(_parse_incr(f))
                lib = "accepted"
            except Exception as exc:  # the library's own exceptions (ParseException, UnicodeDecodeError)
                lib = f"{type(exc).__name__}: {exc}"
            rows.append((what, ours, line, lib))
    return rows


def speed(folder, repeat):
    """Rows ``(file, sentences, words, {reader: seconds})``; the readers' outputs checked equal."""
    rows = []
    for name in FILES:
        path = folder / name
        timed = {}
        reference = None
        for label, reader in READERS:
            seconds, out = best_of(lambda: reader(path), repeat, clock=time.process_time, warmup=True)
            if reference is None:
                reference = out
            elif not _same(reference, out):
                raise SystemExit(f"{label} read {name} differently from read_conllu")
            timed[label] = seconds
        rows.append((name, len(reference), sum(len(s) for s in reference), timed))
    return rows


def _cell(text, limit=110):
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render(err_rows, speed_rows, repeat, folder, load) -> str:
    conllu = _library()
    version = getattr(conllu, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version

        version = dist_version("conllu")
    lines = [
        "# CoNLL-U reader: `problems.io.conllu` against the `conllu` library",
        "",
        f"Written by `python -m benchmarks.conllu_reader --repeat {repeat}` on {datetime.date.today()}.",
        "",
        f"- machine: {os.cpu_count()} cores, shared; load average at start {load} (1 min)",
        f"- Python {platform.python_version()}, conllu {version}",
        "",
        "## Errors",
        "",
        "Each malformed input of the reader's tests (after a `# sent_id = 1` line, so the first word is",
        "on line 2): what `read_conllu` raises (an `InputError` naming the file and this line) and what",
        "`conllu.parse_incr` does with it.",
        "",
        "| input | `read_conllu` | `conllu.parse_incr` |",
        "|---|---|---|",
    ]
    lines += [f"| {what} | {_cell(ours)} | {_cell(lib)} |" for what, ours, _, lib in err_rows]
    n_named = sum(line is not None for _, _, line, _ in err_rows)
    n_lib_accepts = sum(lib == "accepted" for *_, lib in err_rows)
    n_lib_line = sum("line" in lib.lower() for *_, lib in err_rows if lib != "accepted")
    lines += [
        "",
        f"`read_conllu` refuses {n_named} of the {len(err_rows)} inputs naming the file and the line; the "
        f"library accepts {n_lib_accepts} of them, and {n_lib_line} of its errors name a line.",
        "",
        "## Speed",
        "",
        f"CPU seconds to read each file of `{folder.name}/` into `ConlluSentence` objects, best of {repeat}",
        "(the three readers' sentences are checked equal). The library readers do none of",
        "`read_conllu`'s checks: they are lower bounds of a library-based reader that kept them.",
        "",
        "| file | sentences | words | " + " | ".join(f"{label} (s)" for label, _ in READERS) + " | ratios to ours |",
        "|---|---|---|" + "---|" * len(READERS) + "---|",
    ]
    for name, n_sent, n_words, timed in speed_rows:
        ours = timed[READERS[0][0]]
        ratios = ", ".join(f"{timed[label] / ours:.2f}" for label, _ in READERS[1:])
        cells = " | ".join(fixed(timed[label], 3) for label, _ in READERS)
        lines.append(f"| {name} | {n_sent} | {n_words} | {cells} | {ratios} |")
    lines += [
        "",
        "Ratios above 1: the library reader is slower than `read_conllu`.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=PAGE)
    args = ap.parse_args(argv)
    from problems.datasets import dataset_path

    _library()
    folder = dataset_path("ud-danish-ddt")
    load = f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "unknown"
    err_rows = errors()
    speed_rows = speed(folder, args.repeat)
    page = render(err_rows, speed_rows, args.repeat, folder, load)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page, encoding="utf-8")
    print(page)


if __name__ == "__main__":
    main()
