"""CoNLL-U fields with leading or trailing whitespace (issue 39): refused with the file, the line
and the column, as the UD validator marks such files invalid; a space inside FORM / LEMMA stays."""

import pytest

from cutplane.exceptions import InputError
from problems.io.conllu import read_conllu

GOOD = ["1", "He", "he", "PRON", "PRP", "_", "2", "nsubj", "_", "_"]
ROOT = ["2", "runs", "run", "VERB", "VBZ", "_", "0", "root", "_", "_"]
COLS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")


def _write(tmp_path, rows):
    p = tmp_path / "t.conllu"
    p.write_text("# text = He runs\n" + "".join("\t".join(r) + "\n" for r in rows) + "\n")
    return p


@pytest.mark.parametrize("column", range(10))
@pytest.mark.parametrize("pad", [" {}", "{} ", "\u3000{}"])  # the last: an ideographic space
def test_a_padded_field_is_refused_with_file_line_and_column(tmp_path, column, pad):
    bad = list(ROOT)
    bad[column] = pad.format(bad[column])
    p = _write(tmp_path, [GOOD, bad])
    with pytest.raises(InputError, match="leading or trailing whitespace") as info:
        read_conllu(p)
    assert (info.value.path, info.value.line, info.value.field) == (str(p), 3, COLS[column])


def test_the_relation_label_with_a_space_is_not_a_new_label(tmp_path):
    bad = list(ROOT)
    bad[7] = " root"
    with pytest.raises(InputError, match=r"' root' has leading or trailing whitespace"):
        read_conllu(_write(tmp_path, [GOOD, bad]))


def test_inner_spaces_and_clean_files_are_read(tmp_path):
    inner = list(ROOT)
    inner[1], inner[2] = "run s", "run s"  # UD allows spaces inside FORM and LEMMA
    (s,) = read_conllu(_write(tmp_path, [GOOD, inner]))
    assert s.forms == ["He", "run s"] and list(s.heads) == [2, 0]
