"""The OCR letters file: fields, word links, folds, counts of the README."""

import gzip

import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems.io.ocr import OCR_ALPHABET, read_ocr_letters


def line(lid, letter, nxt, wid, pos, fold, pixels=None):
    px = pixels if pixels is not None else [(lid + j) % 2 for j in range(128)]
    return "\t".join(map(str, [lid, letter, nxt, wid, pos, fold] + list(px))) + "\t\n"


def write(path, lines):
    path.write_bytes(gzip.compress("".join(lines).encode()))
    return path


def test_small_file(tmp_path):
    p = write(tmp_path / "l.gz", [line(1, "a", 2, 1, 1, 3), line(2, "b", -1, 1, 2, 3), line(3, "z", -1, 2, 1, 0)])
    d = read_ocr_letters(p)
    assert d.n_letters == 3 and d.n_words == 2
    assert d.words() == ["ab", "z"]
    assert d.word_ptr.tolist() == [0, 2, 3] and d.folds.tolist() == [3, 0]
    assert d.letter_folds.tolist() == [3, 3, 0]
    assert d.pixels.shape == (3, 128) and d.pixels.dtype == np.uint8
    assert d.pixels[0, :4].tolist() == [1, 0, 1, 0]


@pytest.mark.parametrize(
    "bad, where, field",
    [
        (line(2, "B", -1, 1, 2, 3), 2, "letter"),
        (line(2, "b", -1, 1, 2, 3, pixels=[2] + [0] * 127), 2, "pixels"),
        (line(2, "b", -1, 1, 2, 3).replace("\t0\t", "\t", 1), 2, None),
        (line(5, "b", -1, 1, 2, 3), 2, None),  # next_id of line 1 says 2
        (line(2, "b", -1, 1, 3, 3), 2, None),  # position jumps
        (line(2, "b", -1, 1, 2, 4), 2, None),  # fold changes inside the word
        (line(2, "b", -1, 1, 2, 3).replace("\t1\t2\t", "\tx\t2\t", 1), 2, "word_id"),
    ],
)
def test_malformed_lines(tmp_path, bad, where, field):
    p = write(tmp_path / "l.gz", [line(1, "a", 2, 1, 1, 3), bad])
    with pytest.raises(InputError) as err:
        read_ocr_letters(p)
    assert err.value.line == where and err.value.path == str(p)
    if field is not None:
        assert err.value.field == field


def test_file_ending_inside_a_word(tmp_path):
    p = write(tmp_path / "l.gz", [line(1, "a", 2, 1, 1, 3)])
    with pytest.raises(InputError):
        read_ocr_letters(p)


@pytest.mark.data
def test_letter_data_counts_match_the_readme(data_dir):
    d = read_ocr_letters(data_dir / "ocr-letters" / "letter.data.gz")
    assert d.n_letters == 52152 and d.n_words == 6877
    assert len(np.unique(d.word_ids)) == 6877
    assert sorted(set(d.labels.tolist())) == list(range(26)) and len(OCR_ALPHABET) == 26
    lengths = np.diff(d.word_ptr)
    assert lengths.min() == 3 and lengths.max() == 14 and round(lengths.mean(), 2) == 7.58
    assert np.bincount(d.folds).tolist() == [626, 704, 684, 698, 693, 651, 739, 717, 690, 675]
    assert np.bincount(d.letter_folds).tolist() == [4617, 5375, 5110, 5353, 5270, 5001, 5583, 5370, 5331, 5142]
    assert set(np.unique(d.pixels).tolist()) == {0, 1}
    assert np.array_equal(d.letter_ids, np.arange(1, 52153))
