"""Words in the library's docstrings and comments that a reader can resolve.

Checked on every ``.py`` file under ``cutplane/``, ``oracles/`` and ``problems/``, in the
comments and the docstrings (every string that stands alone as a statement: module, class and
function docstrings, and the strings documenting an attribute); other strings (error messages,
log lines, formats) are the code's output and are not checked.

- No citation of the papers by the project's internal file names (``seed 004``, ``seeds/``,
  ``the seeds' experiments``): cite authors and year, as ``docs/references.rst`` lists them.
- No "the chapter" / "chapter Alg. 1.3": the book chapter is Franc et al. 2012.
- No measured figures (timings, memory sizes, speed-ups, "measured ... 12"): they belong on a
  result page under ``docs/results/``, written by a script under ``benchmarks/``; a docstring
  says what the code does and may link to that page. Definitional numbers (defaults,
  thresholds, tolerances such as ``1e-7``, equation numbers, ``O(n log n)``, versions) are fine.

The checker is also run on small planted texts, hits and non-hits, so that a checker that
silently finds nothing fails.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cutplane", "oracles", "problems")

_NUMBER = r"(?<![\w./])\d+(?:\.\d+)?"  # a number that is not the tail of a name, a path or a fraction
_TIME_UNIT = r"(?:s|ms|us|µs|ns|seconds?|minutes?|mins?|hours?|h)"
_MEMORY_UNIT = r"(?:[KMGT]i?B|kB)"
_COMPARATIVE = r"(?:faster|slower|fewer|more|less|quicker|cheaper|costlier)"
_AFTER_UNIT = r"(?![\w^-])"  # "2 s" but not "2 s^2", "3 seconds-long" or "4 MBytes"


def _is_setting(match, line):
    """A size that is a setting, not a finding: stated as a default, or a power of two (budgets,
    thresholds and block sizes are set in binary sizes: ``64 KiB``, ``16 MB of doubles``)."""
    number = float(match.group("n"))
    return "default" in line.lower() or (number.is_integer() and number >= 1 and int(number) & (int(number) - 1) == 0)


RULES = (
    ("seed-file citation", re.compile(r"\bseeds?\s*0\d\d\b|\bseeds/|\bthe\s+seeds?['’]", re.IGNORECASE), None),
    ("'chapter' (cite Franc et al. 2012)", re.compile(r"\bchapter\b", re.IGNORECASE), None),
    # "2.5 s", "300 ms", "about 12 seconds"
    ("measured time", re.compile(rf"{_NUMBER}\s?{_TIME_UNIT}{_AFTER_UNIT}"), None),
    # "81 MB on CoNLL-2000", "1.3 GB", "3.2 bytes per nonzero" (a mean); not a setting (see _is_setting)
    (
        "measured memory",
        re.compile(rf"(?P<n>{_NUMBER})\s?{_MEMORY_UNIT}{_AFTER_UNIT}|(?P<mean>(?<![\w./])\d+\.\d+)\s?bytes\b"),
        lambda m, line: m.group("n") is not None and _is_setting(m, line),
    ),
    # "3x faster", "2.5 times fewer", "(x1.9)", "1.8x the serial time", "a speed-up of 1.7", "speed-ups 1.4"
    (
        "measured ratio",
        re.compile(
            rf"{_NUMBER}\s?(?:x|×|times)\s+{_COMPARATIVE}\b"
            r"|(?<![\w.])[x×]\d+(?:\.\d+)?(?![\w.])"
            rf"|\bspeed-?ups?\s+(?:of\s+)?(?:about\s+|~\s?)?{_NUMBER}"
            rf"|{_NUMBER}\s?(?:x|×)\s+(?:the|as)\b",
            re.IGNORECASE,
        ),
        None,
    ),
    # "measured 12 iterations", "measured at 40%", "(measured: 0.8 of ...)"
    ("measured figure", re.compile(rf"\bmeasured\b[^.;]{{0,60}}?{_NUMBER}", re.IGNORECASE), None),
    # "30% fewer", "saves 40 %", "10-15% of the examples": a percentage stated as a finding
    (
        "measured percentage",
        re.compile(
            rf"{_NUMBER}\s?%\s+(?:{_COMPARATIVE}|of the (?:time|run|memory|cost)|speed)"
            r"|\b(?:saves?|saving|cuts?|reduces?|gains?|gaining|spends?|spent|takes?|took)\s+"
            rf"(?:about\s+|~\s?)?{_NUMBER}\s?%"
            rf"|{_NUMBER}\s?[-–]\s?\d+(?:\.\d+)?\s?%",
            re.IGNORECASE,
        ),
        None,
    ),
)


#: Inline code and quoted text (``"512M"``, ````"1.5GiB"````): examples of input, not findings.
_LITERAL = re.compile(r"``.*?``|\"[^\"]*\"")
_CITATION_RULES = 2  # the first rules apply to the whole line, the figure rules to the prose only


def text_hits(text):
    """``[(line offset, rule, line)]`` of the lines of ``text`` (a comment or a docstring) that break a rule."""
    hits = []
    for offset, line in enumerate(text.splitlines()):
        prose = _LITERAL.sub(" ", line)
        for k, (rule, pattern, allowed) in enumerate(RULES):
            subject = line if k < _CITATION_RULES else prose
            if any(allowed is None or not allowed(m, subject) for m in pattern.finditer(subject)):
                hits.append((offset, rule, line.strip()))
    return hits


def _doc_string_starts(tree):
    """``{(line, column)}`` of the strings that stand alone as statements (docstrings, attribute docs)."""
    starts = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            starts.add((node.value.lineno, node.value.col_offset))
    return starts


def _string_body(literal):
    """The text of a string literal without its prefix and quotes (the same lines)."""
    body = literal.lstrip("rRbBuU")
    quote = body[:3] if body[:3] in ('"""', "'''") else body[0]
    return body[len(quote) : -len(quote)]


def source_hits(source):
    """``[(line, rule, text)]`` of the comments and docstrings of a module's source that break a rule."""
    doc_starts = _doc_string_starts(ast.parse(source))
    hits = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT or (token.type == tokenize.STRING and token.start in doc_starts):
            text = token.string if token.type == tokenize.COMMENT else _string_body(token.string)
            hits.extend((token.start[0] + offset, rule, line) for offset, rule, line in text_hits(text))
    return hits


def _library_files():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


# ----------------------------------------------------------------------------- the checker itself
@pytest.mark.parametrize(
    "text",
    [
        "Alg. 2 of seed 000 on a non-negative vector.",
        "the p-block norms of Seed 004 sec. 2",
        "(seeds 000/002)",
        "see shared/seeds/004_f329c1b377e8be98.txt",
        "Named template sets of the seeds' experiments.",
        "by solving the min-max problem (26) of the chapter",
        "Line search for LS-BMRM (chapter Alg. 1.4, line 7).",
        "the chapter's Fig. 1.4",
        "one pass takes 2.5 s on CoNLL-2000",
        "300 ms per call",
        "about 12 seconds per epoch",
        "the packed rows are 1.3 MB instead of 4.1 MB",
        "a working set of 2.7 GiB after 300 iterations",
        "3x faster than the dense path",
        "2.5 times fewer iterations",
        "1.8x the serial time",
        "(x1.9 on two workers)",
        "a speed-up of 1.7 on 2 cores",
        "speed-ups 1.4 to 1.9",
        "measured on OCR: 12 iterations",
        "30% fewer iterations on CoNLL",
        "saves about 40% of the memory",
        "active rows near the optimum: 10-15% of the examples",
        "the kernel zeroes every page at the first write: 7 ms for 80 MB here",
        "the packed cuts take 3.2 bytes per nonzero",
        "compiling it costs ~1 s",
    ],
)
def test_checker_finds_planted(text):
    assert text_hits(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Cut of the mean hinge loss (Franc et al. 2012, Alg. 1.3).",
        "seed : int, default=0",
        "the seed of the epoch orders; the same seed holds out the same sentences",
        "memory_limit : int or None, default=None. Bytes the working set may use.",
        "tol : float, default=1e-7",
        "Cost O(n log n).",
        "eq. 14, Alg. 1.4, sec. 1.2.3, Table 1, Fig. 2",
        "Since cutplane 0.1.0; Python 3.11",
        "the 2 x 1 cells and the 8-cycles",
        "A_j is an n x d matrix; w in R^d",
        "``time_limit_s`` : seconds of wall clock after which the loop stops",
        "theta = 0.1 works as default (Franc et al. 2012, sec. 1.2.2)",
        "eps : relative gap, e.g. 1e-3 (0.1%)",
        "int16 gaps: 2 bytes each",
        "_SCRATCH_MAX_DIM = 2**21  # up to this dim (16 MB of doubles) a slope is scattered densely",
        "Arrays ``w`` of 64 KiB or more go through a memory-mapped file",
        "max_bytes : int, default=2 GiB",
        "int16 counts take 6 bytes per nonzero instead of 12",
        "``D(s) = r0 + s L - lam/2 s^2 ||w||^2``",
        "Binary images, 16 rows x 8 columns; 1 x 2 and 2 x 1 cells",
        "Re-solves with a 100x smaller ``tol``",
        "mixed with 10% of the uniform vector",
        "(Mao and Tsang 2013, sec. 3.2)",
        'A byte count from text: ``"512M"``, ``"2G"``, ``"1.5GiB"`` (powers of 1024).',
        "the speed-up is on docs/results/parallel_speedup.md",
    ],
)
def test_checker_passes_legitimate(text):
    assert not text_hits(text), text_hits(text)


def test_source_hits_reads_comments_and_docstrings_only():
    source = (
        '"""Module doc: Alg. 2 of seed 000."""\n'
        "\n"
        "def f(x):\n"
        '    """Function doc.\n'
        "\n"
        "    Three times faster: 3x faster than before.\n"
        '    """\n'
        '    message = "seed 000 in an error message is output, not documentation"\n'
        "    return x  # the chapter's eq. 14\n"
        "\n"
        "class A:\n"
        "    size = 1\n"
        '    """Attribute doc: 4.1 MB measured."""\n'
    )
    lines = sorted(line for line, _, _ in source_hits(source))
    assert lines == [1, 6, 9, 13]


# ----------------------------------------------------------------------------- the library
def test_library_comments_and_docstrings_use_resolvable_words():
    hits = []
    for path in _library_files():
        source = path.read_text(encoding="utf-8")
        for line, rule, text in source_hits(source):
            hits.append(f"{path.relative_to(ROOT)}:{line}: {rule}: {text}")
    assert not hits, "\n".join(hits)
