"""CRF++'s files through the CLI (issue 23): a CRF++-style folder written here (template with
unnamed and repeated templates, several ``B`` lines and an input-conditioned ``B00:%x[0,1]``,
train and test files) trains, evaluates and predicts; the column and encoding rules of CRF++."""

import json

import numpy as np
import pytest

from problems.cli.main import main
from problems.io.conll import read_conll

# y_t = y_{t-1} XOR gate_t (y_0 = gate_0): the label pair depends on the observation ``gate`` of
# column 1, which only an input-conditioned bigram template can express; column 0 is noise.
TEMPLATE = """\
# CRF++-style: unnamed, repeated names, several bigram templates
U%x[-1,0]
U%x[1,0]
U00:%x[0,0]
U00:%x[0,0]/%x[0,1]
U01:%x[-1,1]
U02:%x[0,1]

B
B00:%x[0,1]
B01:%x[0,0]
"""
PLAIN = "U00:%x[0,0]\nU00:%x[0,0]/%x[0,1]\nU01:%x[-1,1]\nU02:%x[0,1]\nB\n"


def _sentences(rng, n, gate_space="\t"):
    out = []
    for _ in range(n):
        length = int(rng.integers(3, 9))
        gates = rng.integers(0, 2, size=length)
        y = [int(gates[0])]
        for g in gates[1:]:
            y.append(y[-1] ^ int(g))
        words = [f"w{int(v)}" for v in rng.integers(0, 6, size=length)]
        out.append([f"{w}{gate_space}g{g}\t{'AB'[lab]}" for w, g, lab in zip(words, gates, y)])
    return out


def _write(path, sentences, encoding="utf-8"):
    path.write_text("\n\n".join("\n".join(s) for s in sentences) + "\n", encoding=encoding)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("crfpp")
    rng = np.random.default_rng(5)
    (d / "template").write_text(TEMPLATE, encoding="utf-8")
    (d / "plain_template").write_text(PLAIN, encoding="utf-8")
    _write(d / "train.data", _sentences(rng, 60))
    _write(d / "test.data", _sentences(rng, 40, gate_space=" "))  # spaces and tabs both separate columns
    return d


def _train(d, template, model, *extra):
    return main(
        [
            "train",
            "--task",
            "sequence",
            "--templates",
            str(d / template),
            "--train",
            str(d / "train.data"),
            "--C",
            "100",
            "--regularizer",
            "ssvm",
            "--eps",
            "0.01",
            "--executor",
            "serial",
            "--model",
            str(d / model),
            *extra,
        ]
    )


def _accuracy(d, model, capsys, *extra):
    assert main(["evaluate", "--model", str(d / model), "--test", str(d / "test.data"), *extra]) == 0
    out = capsys.readouterr().out
    fields = out.split()
    return float(fields[fields.index("accuracy") + 1])


def test_crfpp_folder_with_conditioned_bigrams_trains_and_evaluates(folder, capsys):
    d = folder
    assert _train(d, "template", "m.npz", "--report", str(d / "r.json")) == 0
    report = json.loads((d / "r.json").read_text())
    # group names: unnamed 'U' (a bag-of-words pair), 'U00' twice, three bigram groups
    assert set(report["template_weights"]) == {"U", "U00", "U01", "U02", "B", "B00", "B01"}
    acc = _accuracy(d, "m.npz", capsys)
    assert acc == pytest.approx(100.0)  # the XOR chain is exactly representable
    # without the input-conditioned bigram the chain cannot be followed
    assert _train(d, "plain_template", "plain.npz") == 0
    assert _accuracy(d, "plain.npz", capsys) < 85.0
    # predict writes the input columns back with the predicted label
    assert (
        main(["predict", "--model", str(d / "m.npz"), "--input", str(d / "test.data"), "--output", str(d / "p")]) == 0
    )
    pred = read_conll(d / "p")
    gold = read_conll(d / "test.data")
    assert [[row[-1] for row in s] for s in pred.inputs] == gold.labels


def test_template_reading_a_missing_column_names_file_line_and_template(folder, capsys):
    d = folder
    (d / "bad_template").write_text("U00:%x[0,0]\n# comment\nU07:%x[0,0]/%x[1,2]\nB\n", encoding="utf-8")
    assert _train(d, "bad_template", "bad.npz") == 2
    err = capsys.readouterr().err
    assert f"{d / 'bad_template'}:3:" in err and "'U07'" in err and "column 2" in err
    assert "train.data" in err and "2 input column" in err
    assert not (d / "bad.npz").exists()


def test_a_model_applied_to_fewer_columns_names_the_template(folder, tmp_path, capsys):
    d = folder
    assert _train(d, "template", "m2.npz") == 0
    one_col = tmp_path / "one.data"
    one_col.write_text("w1\tA\nw2\tB\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["evaluate", "--model", str(d / "m2.npz"), "--test", str(one_col)]) == 2
    err = capsys.readouterr().err
    assert f"{one_col}:1:" in err and "reads column 1" in err and "m2.npz" in err


def test_ideographic_space_is_a_token_not_a_separator(tmp_path, capsys):
    """CRF++'s example/seg has U+3000 as a token: columns split on tabs and spaces only."""
    lines = ["毎\tk\tB", "日\tk\tI", "\u3000\ty\tB", "新\tk\tB", "聞\tk\tI"]
    (tmp_path / "train.data").write_text("\n".join(lines) + "\n\n" + "\n".join(lines[::-1]) + "\n", encoding="utf-8")
    (tmp_path / "t").write_text("U00:%x[0,0]\nU01:%x[0,1]\nB\n", encoding="utf-8")
    corpus = read_conll(tmp_path / "train.data")
    assert corpus.inputs[0][2] == ("\u3000", "y")
    code = main(
        ["train", "--task", "sequence", "--templates", str(tmp_path / "t"), "--train", str(tmp_path / "train.data")]
        + ["--C", "10", "--regularizer", "ssvm", "--executor", "serial", "--model", str(tmp_path / "m.npz")]
    )
    assert code == 0
    assert main(["evaluate", "--model", str(tmp_path / "m.npz"), "--test", str(tmp_path / "train.data")]) == 0


def test_encoding_option(tmp_path, capsys):
    """A Latin-1 file: refused as UTF-8 with file, line and the option to use; read with --encoding,
    the predictions written back in it."""
    text = "Señor NP B-PER\nJosé NP I-PER\nvive VM O\n\nMaría NP B-PER\nestá VM O\n"
    (tmp_path / "train.txt").write_text("Hoy RG O\n" + text, encoding="latin-1")
    (tmp_path / "t").write_text("U00:%x[0,0]\nU01:%x[0,1]\nB\n", encoding="utf-8")
    argv = ["train", "--task", "sequence", "--templates", str(tmp_path / "t"), "--train", str(tmp_path / "train.txt")]
    argv += ["--C", "10", "--regularizer", "ssvm", "--executor", "serial", "--model", str(tmp_path / "m.npz")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'train.txt'}:2:" in err and "UTF-8" in err and "--encoding" in err
    assert main([*argv, "--encoding", "latin-1"]) == 0
    out = tmp_path / "pred.txt"
    argv = ["predict", "--model", str(tmp_path / "m.npz"), "--input", str(tmp_path / "train.txt")]
    assert main([*argv, "--encoding", "latin-1", "--output", str(out)]) == 0
    assert out.read_bytes().decode("latin-1").split("\n")[1].startswith("Señor NP B-PER ")
    assert main(["evaluate", "--model", str(tmp_path / "m.npz"), "--test", str(tmp_path / "train.txt")]) == 2
    assert "--encoding" in capsys.readouterr().err
    test = ["evaluate", "--model", str(tmp_path / "m.npz"), "--test", str(tmp_path / "train.txt")]
    assert main([*test, "--encoding", "latin-1"]) == 0
    # an unknown codec and a codec that cannot be read line by line are refused by the option
    assert main([*test, "--encoding", "no-such-codec"]) == 2
    assert "unknown encoding" in capsys.readouterr().err
    assert main([*test, "--encoding", "utf-16"]) == 2
    assert "ASCII-compatible" in capsys.readouterr().err


def test_encoding_is_refused_by_tasks_that_do_not_read_it(tmp_path, capsys):
    (tmp_path / "a.svm").write_text("1 1:1\n-1 2:1\n", encoding="utf-8")
    code = main(
        ["train", "--task", "binary", "--train", str(tmp_path / "a.svm"), "--model", str(tmp_path / "m.npz")]
        + ["--encoding", "latin-1"]
    )
    assert code == 2
    assert "--encoding" in capsys.readouterr().err
