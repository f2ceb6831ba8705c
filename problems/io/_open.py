"""Open a text file for the readers: transparent gzip, strict decoding with line-numbered errors.

Every reader in :mod:`problems.io` goes through :func:`open_text` (a file-like object for
code that wants one, e.g. :mod:`problems.io.sniff`) or :func:`iter_lines` (numbered lines
for the hand-written parsers). Both

- decompress gzip, bzip2 and xz input transparently (the formats scikit-learn's and numpy's
  readers take; recognised by their magic bytes, or the ``.gz`` / ``.bz2`` / ``.xz`` suffix), and
  refuse zip, zstd, 7z, lz4 and legacy lzma files with a message saying so
  (:func:`compression_of`);
- decode strictly, one line at a time, so a bad byte raises
  :class:`~cutplane.exceptions.InputError` naming the file and the 1-based line; the encoding is
  UTF-8 unless another is named (``encoding=``, the command line's ``--encoding``): any
  ASCII-compatible codec Python knows (``latin-1`` for CoNLL-2002's original files, ``euc-jp``
  for CRF++'s JapaneseNE example, ``shift_jis``, ``gb18030``, ...; not UTF-16 / UTF-32, whose
  line ends are not the byte ``\\n``);
- drop a leading byte-order mark (U+FEFF) and turn ``\\r\\n`` line ends into ``\\n``;
- report a truncated or corrupt compressed stream as an ``InputError`` naming the line reached;
- report a missing file, a directory or an unreadable file as an ``InputError`` naming it.

Policy shared by every reader (documented here once):

- ``\\r\\n`` (Windows) line ends and a leading UTF-8 byte-order mark are accepted silently;
  a lone ``\\r`` is not a line end (it stays inside the line; each format's own splitting
  decides what it is: the column files drop one that ends a line and otherwise keep it in its
  column, :mod:`problems.io.conll`);
- any byte sequence that is not valid in the encoding is an error (no replacement characters, no
  guessing); the message names the file, the line and the encoding, and says how to name another;
- a file with no record at all (empty, or only blank / comment lines) is an error of the
  ``read_*`` functions (:func:`no_records`); the streaming ``iter_*`` functions yield nothing;
- integers in numeric fields are ASCII digits only (:func:`parse_int`): no ``1_000``, no
  superscripts or other scripts' digits, no values outside the int64 range.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from cutplane.exceptions import InputError

__all__ = [
    "open_text",
    "iter_lines",
    "LineReader",
    "parse_int",
    "no_records",
    "check_encoding",
    "DEFAULT_ENCODING",
    "COMPRESSIONS",
    "UNSUPPORTED_COMPRESSIONS",
    "compression_of",
    "open_binary",
    "decompression_errors",
]

_GZIP_MAGIC = b"\x1f\x8b"
#: The encoding of input files unless another is named.
DEFAULT_ENCODING = "utf-8"
_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MAX = 2**63 - 1


#: The compressions read transparently, as scikit-learn's readers and numpy do: name -> (suffix,
#: test of the file's first bytes).
COMPRESSIONS = {
    "gzip": (".gz", lambda head: head[:2] == _GZIP_MAGIC),
    "bzip2": (".bz2", lambda head: head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] == b"1AY&SY"),
    "xz": (".xz", lambda head: head[:6] == b"\xfd7zXZ\x00"),
}
#: Archive and compression formats recognised by their first bytes and refused with a message
#: saying so: name -> (their usual suffixes, magic bytes).
UNSUPPORTED_COMPRESSIONS = {
    "zip": ((".zip",), b"PK\x03\x04"),
    "zstd": ((".zst", ".zstd"), b"\x28\xb5\x2f\xfd"),
    "7z": ((".7z",), b"7z\xbc\xaf\x27\x1c"),
    "lz4": ((".lz4",), b"\x04\x22\x4d\x18"),
    "lzma (legacy .lzma)": ((".lzma",), b"\x5d\x00\x00"),
}


def compression_of(path, head: bytes) -> str | None:
    """The compression of a file from its first bytes ``head`` (at least 10 of them when the file
    has them) or, failing that, its suffix (a corrupt ``.gz`` is reported by the decompressor):
    ``"gzip"``, ``"bzip2"``, ``"xz"`` or None.

    Raises
    ------
    InputError
        A compression or archive format the readers do not read (zip, zstd, 7z, lz4, lzma).
    """
    for name, (_, test) in COMPRESSIONS.items():
        if test(head):
            return name
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    for name, (_, magic) in UNSUPPORTED_COMPRESSIONS.items():
        if head.startswith(magic):
            raise InputError(
                f"a {name} file: this compression is not read (gzip .gz, bzip2 .bz2 and xz .xz are); "
                "decompress it first",
                path=path,
                field="compression",
            )
    for name, (ending, _) in COMPRESSIONS.items():
        if suffix == ending:  # named so but not so: its decompressor reports the corrupt stream
            return name
    return None


def open_binary(path) -> io.BufferedIOBase:
    """The byte stream of ``path``, decompressed when it is gzip, bzip2 or xz
    (:func:`compression_of`); its ``compression`` attribute names the compression (None: plain).

    Raises
    ------
    InputError
        A folder, a file that cannot be opened, a compression that is not read.
    """
    if os.path.isdir(path):
        raise InputError("is a directory; expected a file", path=path)
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot open file: {exc.strerror or exc}", path=path) from None
    try:
        head = raw.peek(10)[:10] if hasattr(raw, "peek") else b""
        kind = compression_of(path, head)
    except OSError as exc:  # pragma: no cover - exotic file systems
        raw.close()
        raise InputError(f"cannot read file: {exc}", path=path) from None
    except InputError:
        raw.close()
        raise
    if kind is None:
        setattr(raw, "compression", None)  # noqa: B010 - as below
        return raw
    raw.close()  # the decompressor opens the file by its name, and closes it with itself
    stream: io.BufferedIOBase
    try:
        if kind == "gzip":
            stream = gzip.GzipFile(os.fspath(path), mode="rb")
        elif kind == "bzip2":
            import bz2

            stream = bz2.BZ2File(os.fspath(path), mode="rb")
        else:
            import lzma

            stream = lzma.LZMAFile(os.fspath(path), mode="rb")
    except OSError as exc:  # pragma: no cover - the file went away since it was opened
        raise InputError(f"cannot open file: {exc.strerror or exc}", path=path) from None
    setattr(stream, "compression", kind)  # noqa: B010 - an attribute the io classes do not declare
    return stream


def decompression_errors() -> tuple:
    """The exceptions a decompressor raises on a corrupt or truncated stream."""
    import lzma

    return (OSError, EOFError, zlib.error, lzma.LZMAError)


def check_encoding(encoding) -> str:
    """The canonical name of a text encoding the readers can use, line by line.

    Parameters
    ----------
    encoding : str
        A codec name Python knows (``"utf-8"``, ``"latin-1"``, ``"euc-jp"``, ...).

    Returns
    -------
    str
        Python's name of the codec (``"euc_jp"`` for ``"EUC-JP"``).

    Raises
    ------
    InputError
        An unknown codec, or one that is not ASCII-compatible (UTF-16, UTF-32: their line ends
        are not the byte ``\\n``, so files cannot be read line by line).
    """
    import codecs

    try:
        info = codecs.lookup(str(encoding))
    except LookupError:
        raise InputError(
            f"unknown encoding {str(encoding)[:40]!r}; expected a codec name such as utf-8, latin-1, euc-jp, "
            "shift_jis or gb18030",
            field="encoding",
        ) from None
    try:
        ascii_compatible = "a b\t\n".encode(info.name) == b"a b\t\n"
    except (UnicodeError, LookupError, TypeError):  # pragma: no cover - codecs that are not text codecs
        ascii_compatible = False
    if not ascii_compatible:
        raise InputError(
            f"encoding {info.name!r} is not ASCII-compatible (its line ends are not the byte \\n); expected "
            "utf-8, latin-1, euc-jp, shift_jis, gb18030 or another ASCII-compatible codec",
            field="encoding",
        )
    return info.name


class LineReader(io.TextIOBase):
    """A read-only text stream over a (possibly gzip'ed) text file, decoding line by line.

    Iterating yields lines ending in ``"\\n"`` (except possibly the last), like a file opened
    in text mode with universal newlines for ``\\r\\n``. ``lineno`` is the number of the
    last line returned (1-based; 0 before the first).

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.
    encoding : str, default="utf-8"
        Its text encoding (:func:`check_encoding`).
    """

    def __init__(self, path, encoding: str = DEFAULT_ENCODING):
        super().__init__()
        self.encoding_name = check_encoding(encoding)
        self.path = os.fspath(path)
        self.lineno = 0
        self._stream = open_binary(self.path)
        #: gzip, bzip2, xz or None (plain).
        self.compression: str | None = getattr(self._stream, "compression", None)

    # -- io.TextIOBase interface ---------------------------------------------------------
    def readable(self) -> bool:
        return True

    # typeshed's io.TextIOBase inherits IOBase's bytes-returning readline/__next__ (it ignores the
    # conflict itself); a text stream returns str.
    def readline(self, size=-1) -> str:  # type: ignore[override]
        if size is not None and size >= 0:
            raise io.UnsupportedOperation("readline(size) is not supported; read whole lines")
        try:
            data = self._stream.readline()
        except decompression_errors() as exc:
            what = f"corrupt or truncated {self.compression} data" if self.compression else "cannot read file"
            raise InputError(f"{what} ({exc})", path=self.path, line=self.lineno + 1) from None
        if not data:
            return ""
        self.lineno += 1
        try:
            text = data.decode(self.encoding_name)
        except UnicodeDecodeError as exc:
            enc = "UTF-8" if self.encoding_name == "utf-8" else self.encoding_name
            others = [e for e in ("latin-1", "euc-jp", "shift_jis", "gb18030", "utf-8") if e != self.encoding_name]
            raise InputError(
                f"invalid {enc} at byte {exc.start} of the line (byte {data[exc.start : exc.start + 1]!r}); "
                f"expected {enc} text. If the file is in another encoding, name it: --encoding on the command line "
                f"(encoding= in Python), e.g. --encoding {others[0]} or --encoding {others[1]}",
                path=self.path,
                line=self.lineno,
                field="encoding",
            ) from None
        if self.lineno == 1 and text.startswith("\ufeff"):
            text = text[1:]
        if text.endswith("\r\n"):
            text = text[:-2] + "\n"
        return text

    def read(self, size=-1) -> str:
        if size is not None and size >= 0:
            raise io.UnsupportedOperation("read(size) is not supported; read whole lines")
        return "".join(iter(self.readline, ""))

    def __iter__(self):
        return self

    def __next__(self) -> str:  # type: ignore[override]  # typeshed gap, see readline
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
        super().close()

    def error(self, message: str, *, field: str | None = None, line: int | None = None) -> InputError:
        """An :class:`InputError` at the current line (or ``line``) of this file."""
        return InputError(message, path=self.path, line=self.lineno if line is None else line, field=field)


@contextmanager
def open_text(path, encoding: str = DEFAULT_ENCODING) -> Iterator[LineReader]:
    """Open ``path`` as a text stream (UTF-8 unless ``encoding`` names another), gunzipping it when needed.

    Parameters
    ----------
    path : str or os.PathLike
        A plain or gzip'ed text file.
    encoding : str, default="utf-8"
        Its text encoding (:func:`check_encoding`).

    Yields
    ------
    reader : LineReader
        File-like object (``read``, ``readline``, iteration) with ``path`` and ``lineno``.

    Raises
    ------
    InputError
        The file cannot be opened, is not valid in its encoding (names the line), or is a corrupt
        gzip; an unknown or unsupported encoding.
    """
    reader = LineReader(path, encoding)
    try:
        yield reader
    finally:
        reader.close()


def iter_lines(path, encoding: str = DEFAULT_ENCODING) -> Iterator[tuple[int, str]]:
    """Yield ``(lineno, line)`` for each line of ``path``, line ends removed.

    Parameters
    ----------
    path : str or os.PathLike
        A plain or gzip'ed text file.
    encoding : str, default="utf-8"
        Its text encoding (:func:`check_encoding`).

    Yields
    ------
    lineno : int
        1-based line number.
    line : str
        The line without its trailing ``"\\n"`` / ``"\\r\\n"`` (other whitespace is kept).
    """
    with open_text(path, encoding) as reader:
        for line in reader:
            yield reader.lineno, line[:-1] if line.endswith("\n") else line


def parse_int(text: str, *, path=None, line=None, field=None, min_value=None, max_value=None) -> int:
    """A decimal integer written with ASCII digits (optional sign), within [min_value, max_value].

    Python's ``int`` also accepts ``"1_000"``, other scripts' digits and surrounding spaces,
    and has no range limit; file fields must be plain decimal numbers that fit in int64.

    Raises
    ------
    InputError
        Naming ``path``, ``line`` and ``field``, saying what was expected and found.
    """
    lo = -_INT64_MAX - 1 if min_value is None else min_value
    hi = _INT64_MAX if max_value is None else max_value
    if not _INT.fullmatch(text):
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise InputError(
            f"{shown!r} is not an integer; expected ASCII decimal digits", path=path, line=line, field=field
        )
    if len(text) > 25:  # clearly out of range; avoids int() on thousands of digits
        raise InputError(
            f"integer with {len(text)} digits is out of range {lo}..{hi}", path=path, line=line, field=field
        )
    value = int(text)
    if not lo <= value <= hi:
        raise InputError(f"integer {value} is out of range {lo}..{hi}", path=path, line=line, field=field)
    return value


def no_records(path, what: str) -> InputError:
    """The error of a ``read_*`` function for a file that holds no ``what`` (e.g. "sentences")."""
    return InputError(f"the file holds no {what} (it is empty, or has only blank or comment lines)", path=path)
