"""The SVMlight reader keeps qid: (read_svmlight_ranking); a malformed qid names file and line."""

import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems import RankSVM
from problems.io.svmlight import read_svmlight_file, read_svmlight_ranking


def test_qid_kept_and_a_ranking_model_trained(tmp_path):
    path = tmp_path / "train.svm"
    path.write_text("2 qid:7 1:0.5 3:1\n1 qid:7 2:1\n# a comment\n0 qid:3 1:1 # tail\n1 qid:3 3:2\n")
    data = read_svmlight_ranking(path)
    np.testing.assert_array_equal(data.qid, [7, 7, 3, 3])
    np.testing.assert_array_equal(data.y, [2, 1, 0, 1])
    assert data.X.shape == (4, 3) and data.zero_based is False
    X, y, _ = read_svmlight_file(path)  # the classification reader is unchanged
    assert (X != data.X).nnz == 0
    model = RankSVM(C=10.0).fit(data.X, data.y, data.qid)
    assert model.n_pairs_ == 2


def test_no_qid_is_one_query(tmp_path):
    path = tmp_path / "plain.svm"
    path.write_text("1 1:1\n0 2:1\n")
    assert read_svmlight_ranking(path).qid is None


@pytest.mark.parametrize(
    "text, line",
    [("2 qid:1 1:0.5\n1 qid:1.5 2:1\n", 2), ("2 qid:1 1:0.5\n1 2:1\n", 2), ("1 qid: 1:1\n", 1)],
)
def test_malformed_qid_names_file_and_line(tmp_path, text, line):
    path = tmp_path / "bad.svm"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_svmlight_ranking(path)
    assert err.value.line == line and err.value.field == "qid"
    assert str(path) in str(err.value)
