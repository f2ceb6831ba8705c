"""benchmarks/conllu_reader.py: every malformed input is refused by read_conllu naming its line,
and on the Danish files the library readers return the same sentences (checked by the script)."""

import pytest

pytest.importorskip("conllu")


def test_every_malformed_input_names_its_line():
    from benchmarks.conllu_reader import MALFORMED, errors

    rows = errors()
    assert len(rows) == len(MALFORMED)
    for what, ours, line, _library in rows:
        assert line is not None and f"bad.conllu:{line}:" in ours, what


@pytest.mark.data
def test_the_page_on_the_danish_files(data_dir, tmp_path, capsys):
    from benchmarks.conllu_reader import main

    out = tmp_path / "page.md"
    main(["--repeat", "1", "--out", str(out)])
    page = out.read_text()
    assert "| da_ddt-ud-dev.conllu.gz | 564 | 10332 |" in page
    assert "| da_ddt-ud-test.conllu.gz | 565 | 10023 |" in page
    assert page in capsys.readouterr().out
