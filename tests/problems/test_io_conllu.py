"""CoNLL-U reader and writer: real treebank counts, skipped tokens, clear errors."""

import gzip

import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems.io.conllu import iter_conllu, read_conllu, write_conllu

GOOD = """# sent_id = s1
# text = Han gik hjem .
1\tHan\than\tPRON\t_\t_\t2\tnsubj\t_\t_
2-3\tgikhjem\t_\t_\t_\t_\t_\t_\t_\t_
2\tgik\tgå\tVERB\t_\t_\t0\troot\t_\t_
3\thjem\thjem\tADV\t_\t_\t2\tadvmod\t_\t_
3.1\tglemt\tglemme\tVERB\t_\t_\t_\t_\t2:orphan\t_
4\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

1\tJa\tja\tINTJ\t_\t_\t0\troot\t_\t_
"""


def _write(tmp_path, text, name="x.conllu", gz=False, raw=None):
    p = tmp_path / (name + (".gz" if gz else ""))
    data = raw if raw is not None else text.encode("utf-8")
    p.write_bytes(gzip.compress(data) if gz else data)
    return p


@pytest.mark.parametrize("gz", [False, True])
def test_reads_words_skips_multiword_and_empty_nodes(tmp_path, gz):
    sents = read_conllu(_write(tmp_path, GOOD, gz=gz))
    assert len(sents) == 2
    s = sents[0]
    assert s.forms == ["Han", "gik", "hjem", "."]
    assert s.lemmas == ["han", "gå", "hjem", "."]
    assert s.upos == ["PRON", "VERB", "ADV", "PUNCT"]
    assert s.deprels == ["nsubj", "root", "advmod", "punct"]
    np.testing.assert_array_equal(s.heads, [2, 0, 2, 2])
    np.testing.assert_array_equal(s.tree(), [-1, 2, 0, 2, 2])
    assert s.sent_id == "s1" and s.line == 3
    assert sents[1].forms == ["Ja"] and sents[1].line == 10  # no trailing blank line needed


def _danish(data_dir, split):
    p = data_dir / "ud-danish-ddt" / f"da_ddt-ud-{split}.conllu.gz"
    if not p.exists():
        pytest.skip(f"{p} absent")
    return p


@pytest.mark.data
@pytest.mark.parametrize("split, n_sent, n_tok", [("dev", 564, 10332), ("test", 565, 10023)])
def test_danish_counts_match_readme(data_dir, split, n_sent, n_tok):
    # counts from shared/data/ud-danish-ddt/README.md
    n_s = n_t = 0
    roots = 0
    for s in iter_conllu(_danish(data_dir, split)):
        n_s += 1
        n_t += len(s)
        roots += int(np.count_nonzero(s.heads == 0))
    assert (n_s, n_t) == (n_sent, n_tok)
    assert roots == n_sent  # UD: one root child per sentence


@pytest.mark.data
def test_danish_dev_non_projective_count(data_dir):
    from oracles.parsing import is_projective

    sents = read_conllu(_danish(data_dir, "dev"))
    assert sum(not is_projective(s.tree()) for s in sents) == 104  # README table


def test_round_trip_and_predicted_heads(tmp_path):
    sents = read_conllu(_write(tmp_path, GOOD))
    out = tmp_path / "out.conllu.gz"
    write_conllu(out, sents)
    back = read_conllu(out)
    for a, b in zip(sents, back):
        assert a.forms == b.forms and a.deprels == b.deprels and a.comments == b.comments
        np.testing.assert_array_equal(a.heads, b.heads)
    pred = [np.array([-1, 0, 1, 2, 3]), np.array([0])]  # both conventions accepted
    write_conllu(tmp_path / "pred.conllu", sents, heads=pred)
    back = read_conllu(tmp_path / "pred.conllu")
    np.testing.assert_array_equal(back[0].heads, [0, 1, 2, 3])
    assert back[0].deprels == ["_"] * 4
    with pytest.raises(InputError, match="heads"):
        write_conllu(tmp_path / "bad.conllu", sents, heads=[np.array([0, 1])])


def test_missing_heads_allowed_only_when_asked(tmp_path):
    text = "1\tHej\thej\tINTJ\t_\t_\t_\t_\t_\t_\n2\tdu\tdu\tPRON\t_\t_\t_\t_\t_\t_\n"
    p = _write(tmp_path, text)
    with pytest.raises(InputError, match="HEAD"):
        read_conllu(p)
    (s,) = read_conllu(p, allow_missing_heads=True)
    assert s.heads is None
    with pytest.raises(InputError):
        s.tree()


def _line(form, head, tid):
    return f"{tid}\t{form}\t{form}\tNOUN\t_\t_\t{head}\tdep\t_\t_\n"


@pytest.mark.parametrize(
    "body, line, msg",
    [
        # head out of range (3 words)
        (_line("a", 0, 1) + _line("b", 7, 2) + _line("c", 1, 3), 3, "head of word 2 is 7"),
        # cycle 2 -> 3 -> 2
        (_line("a", 0, 1) + _line("b", 3, 2) + _line("c", 2, 3), 3, "cycle"),
        # self loop
        (_line("a", 1, 1), 2, "itself"),
        # non-integer head
        (_line("a", 0, 1) + _line("b", "x", 2), 3, "integer"),
        # bad column count
        (_line("a", 0, 1) + "2\tb\tb\tNOUN\t_\t_\t1\tdep\t_\n", 3, "10 tab-separated columns"),
        # ids out of order
        (_line("a", 0, 1) + _line("b", 1, 3), 3, "expected 2"),
        # comment inside a sentence
        (_line("a", 0, 1) + "# oops\n" + _line("b", 1, 2), 3, "comment"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path, body, line, msg):
    p = _write(tmp_path, "# sent_id = 1\n" + body)
    with pytest.raises(InputError, match=msg) as exc:
        read_conllu(p)
    assert exc.value.path == str(p)
    assert exc.value.line == line
    assert f"{p}:{line}:" in str(exc.value)


def test_cycle_error_is_reported_after_earlier_good_sentences(tmp_path):
    text = GOOD + "\n" + _line("a", 2, 1) + _line("b", 1, 2)
    p = _write(tmp_path, text, gz=True)
    it = iter_conllu(p)
    assert len(next(it)) == 4 and len(next(it)) == 1
    with pytest.raises(InputError, match="cycle") as exc:
        next(it)
    assert exc.value.line == 12


@pytest.mark.parametrize("gz", [False, True])
def test_bad_utf8_names_the_line(tmp_path, gz):
    raw = GOOD.encode("utf-8").replace(b"hjem\thjem", b"hj\xffem\thjem")
    p = _write(tmp_path, "", raw=raw, gz=gz)
    with pytest.raises(InputError, match="UTF-8") as exc:
        read_conllu(p)
    assert exc.value.line == 6 and exc.value.path == str(p)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot open"):
        read_conllu(tmp_path / "nope.conllu")
