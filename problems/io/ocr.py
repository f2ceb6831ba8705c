"""The OCR handwritten-letters file ``letter.data`` (Taskar, Guestrin & Koller 2003).

Tab-separated, one letter per line: ``id``, ``letter`` (a-z), ``next_id`` (-1 at the end of
a word), ``word_id``, ``position`` (1-based), ``fold`` (0-9), then 128 pixels (0/1, 16 rows
x 8 columns, row-major); lines end with a tab (an empty last field). The sequences are the
words: the letters linked by ``next_id``, which in the file are consecutive lines.

Input policy: integer fields are ASCII decimal numbers within int64; blank lines are
skipped; a file with no letter, or ending inside a word, is an error; CRLF line ends and a
trailing tab are accepted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from cutplane.exceptions import InputError
from problems.io._open import iter_lines, no_records, parse_int

__all__ = ["OCRLetters", "read_ocr_letters", "OCR_ALPHABET"]

OCR_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_N_PIXELS = 128
_CODE = {c: k for k, c in enumerate(OCR_ALPHABET)}


@dataclass
class OCRLetters:
    """The letters of ``letter.data`` grouped into words.

    Attributes
    ----------
    pixels : ndarray of shape (n_letters, 128), uint8
        Binary images, 16 rows x 8 columns row-major (``pixels[i].reshape(16, 8)``).
    labels : ndarray of shape (n_letters,), int32
        Letter codes, ``OCR_ALPHABET[labels[i]]`` is the letter.
    letter_ids : ndarray of shape (n_letters,), int64
        The file's ``id`` column.
    word_ptr : ndarray of shape (n_words + 1,), int64
        Word ``j`` is letters ``word_ptr[j]:word_ptr[j + 1]``.
    word_ids : ndarray of shape (n_words,), int64
        The file's ``word_id`` of each word.
    folds : ndarray of shape (n_words,), int32
        Cross-validation fold (0-9) of each word.
    path : str or None
    """

    pixels: np.ndarray
    labels: np.ndarray
    letter_ids: np.ndarray
    word_ptr: np.ndarray
    word_ids: np.ndarray
    folds: np.ndarray
    path: str | None = None

    @property
    def n_letters(self) -> int:
        return len(self.labels)

    @property
    def n_words(self) -> int:
        return len(self.word_ids)

    @property
    def letter_folds(self) -> np.ndarray:
        """Fold of each letter: int32 of shape (n_letters,)."""
        return np.repeat(self.folds, np.diff(self.word_ptr))

    def words(self) -> list[str]:
        """The words as strings."""
        chars = np.array(list(OCR_ALPHABET))[self.labels]
        return ["".join(chars[a:b]) for a, b in zip(self.word_ptr[:-1], self.word_ptr[1:])]


def _int(value: str, path, lineno, name) -> int:
    return parse_int(value, path=path, line=lineno, field=name)


def read_ocr_letters(path) -> OCRLetters:
    """Read ``letter.data`` (plain or gzip'ed) and group the letters into words.

    Raises
    ------
    InputError
        Wrong field count, a letter outside a-z, a pixel other than 0/1, a non-integer
        field, or broken word links (``next_id`` not the next line's id, positions not
        consecutive, a fold changing inside a word), naming the file and the line.
    """
    pix_rows: list[bytes] = []
    labels, ids, word_ptr, word_ids, folds = [], [], [0], [], []
    expect_next = -1  # id the next line must have when inside a word, else -1
    cur_word = cur_fold = None
    cur_pos = 0
    lineno = 0
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if fields and fields[-1] == "":
            fields.pop()
        if len(fields) != 6 + _N_PIXELS:
            raise InputError(
                f"expected {6 + _N_PIXELS} tab-separated fields (id, letter, next_id, word_id, "
                f"position, fold, 128 pixels), found {len(fields)}",
                path=path,
                line=lineno,
            )
        lid = _int(fields[0], path, lineno, "id")
        letter = fields[1]
        if letter not in _CODE:
            raise InputError(f"expected a letter a-z, found {letter!r}", path=path, line=lineno, field="letter")
        nxt = _int(fields[2], path, lineno, "next_id")
        wid = _int(fields[3], path, lineno, "word_id")
        pos = _int(fields[4], path, lineno, "position")
        fold = _int(fields[5], path, lineno, "fold")
        px = "".join(fields[6:])
        if len(px) != _N_PIXELS or px.strip("01") or "" in fields[6:]:
            raise InputError("expected 128 pixel fields of 0 or 1", path=path, line=lineno, field="pixels")
        if expect_next != -1:
            if lid != expect_next or wid != cur_word or fold != cur_fold or pos != cur_pos + 1:
                raise InputError(
                    f"broken word link: expected letter id {expect_next} of word {cur_word} at "
                    f"position {cur_pos + 1}, fold {cur_fold}",
                    path=path,
                    line=lineno,
                )
        else:
            if pos != 1:
                raise InputError(
                    f"a word must start at position 1, found {pos}", path=path, line=lineno, field="position"
                )
            if not 0 <= fold <= 9:
                raise InputError(f"fold must be in 0..9, found {fold}", path=path, line=lineno, field="fold")
            cur_word, cur_fold = wid, fold
        cur_pos = pos
        pix_rows.append(px.encode("ascii"))
        labels.append(_CODE[letter])
        ids.append(lid)
        if nxt == -1:
            word_ptr.append(len(labels))
            word_ids.append(wid)
            folds.append(fold)
            expect_next = -1
        else:
            expect_next = nxt
    if not labels:
        raise no_records(path, "letters")
    if expect_next != -1:
        raise InputError(f"file ends inside word {cur_word} (expected letter id {expect_next})", path=path, line=lineno)
    pixels = (
        np.frombuffer(b"".join(pix_rows), dtype=np.uint8).reshape(-1, _N_PIXELS) - ord("0")
        if pix_rows
        else np.zeros((0, _N_PIXELS), np.uint8)
    )
    return OCRLetters(
        pixels=pixels.astype(np.uint8),
        labels=np.asarray(labels, dtype=np.int32),
        letter_ids=np.asarray(ids, dtype=np.int64),
        word_ptr=np.asarray(word_ptr, dtype=np.int64),
        word_ids=np.asarray(word_ids, dtype=np.int64),
        folds=np.asarray(folds, dtype=np.int32),
        path=os.fspath(path),
    )
