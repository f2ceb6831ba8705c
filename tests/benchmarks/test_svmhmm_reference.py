"""benchmarks/svmhmm_reference.py without SVM^hmm: its file format, its output parsing (a stand-in
program) and the time-to-target reading of our history."""

import stat

import numpy as np
import pytest

from benchmarks import svmhmm_reference as ref


def test_file_format_is_one_token_a_line(tmp_path):
    from problems.sequence.feature_index import FeatureIndex, LabelAlphabet

    X = [[("a", "N"), ("b", "V")], [("a", "N")]]
    y = [["B", "I"], ["O"]]
    index = FeatureIndex("U00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,0]\nB\n")
    feats = index.fit_transform(X)
    codes = LabelAlphabet.fit(y).encode_corpus(y)
    path = tmp_path / "t.dat"
    ref.write_svmhmm_file(path, feats, codes)
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    for line, qid, t in zip(lines, [1, 1, 2], range(3)):
        tag, q, *pairs = line.split()
        assert int(tag) == codes[t] + 1 and q == f"qid:{qid}"
        ids = [int(p.split(":")[0]) for p in pairs]
        assert ids == sorted(set(ids)) and min(ids) >= 1 and all(p.endswith(":1") for p in pairs)
        expected = sorted(set(feats.indices[feats.indptr[t] : feats.indptr[t + 1]] + 1))
        assert ids == expected


def test_output_of_svm_hmm_is_parsed(tmp_path):
    fake = tmp_path / "svm_hmm_learn"
    fake.write_text(
        "#!/bin/sh\n"
        "echo 'SVM-HMM stand-in'\n"
        "echo 'Upper bound on duality gap: 1.00000'\n"
        "echo 'Dual objective value: dval=292.1'\n"
        "echo 'Primal objective value: pval=293.23125'\n"
        "echo 'Number of iterations: 211'\n"
        "echo 'Runtime in cpu-seconds: 0.01'\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = ref.run_svmhmm(tmp_path, tmp_path / "train.dat", tmp_path / "m.dat", 100.0, 0.1)
    assert out["primal"] == 293.23125 and out["dual"] == 292.1 and out["iterations"] == 211
    assert out["cpu_s"] >= 0 and out["wall_s"] > 0


def test_missing_binary_is_one_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="svm_hmm_learn not found"):
        ref.run_svmhmm(tmp_path, tmp_path / "x", tmp_path / "y", 1.0, 0.1)


def test_time_to_target_is_read_from_the_history():
    from oracles.sequence import SequenceHingeOracle
    from tests.oracles.test_sequence_oracle import random_data

    rng = np.random.default_rng(0)
    oracle = SequenceHingeOracle(*random_data(rng, 30, 5, 10, 3), 10, 3)
    full = ref.run_ours(oracle, 10.0, 1e-6, -np.inf, 0, None)  # an unreachable target: runs to eps
    assert full["status"] == "converged" and not full["reached_target"]
    target = full["objective"] * 1.2
    rec = ref.run_ours(oracle, 10.0, 1e-6, target, 0, None)
    assert rec["reached_target"] and rec["status"] == "callback"
    assert rec["objective"] <= target and rec["iteration_at_target"] == rec["iterations"]
    assert 0 <= rec["cpu_s_at_target"] and 0 <= rec["wall_s_at_target"] <= rec["wall_s"]


def test_page_from_records(tmp_path):
    import json

    rec = {
        "command": "python -m benchmarks.svmhmm_reference --svm-hmm D --C 100",
        "date": "2026-11-26 07:06",
        "n_sentences": 10,
        "n_features": 5,
        "n_labels": 3,
        "C": 100.0,
        "e": 0.1,
        "load_average": [1.0, 1.0, 1.0],
        "svm_hmm": {"primal": 2.5, "dual": 2.4, "iterations": 7, "cpu_s": 10.0, "wall_s": 10.5},
        "ours": [
            {
                "arm": "serial",
                "reached_target": True,
                "iteration_at_target": 4,
                "cached_cuts": 0,
                "cpu_s_at_target": 5.0,
                "cpu_ratio": 0.5,
                "wall_s_at_target": 5.2,
                "wall_ratio": 0.495,
                "objective": 2.49,
                "lower_bound": 2.3,
            }
        ],
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rec))
    out = tmp_path / "page.md"
    assert ref.main(["--render", str(path), "--out", str(out)]) == 0
    page = out.read_text()
    assert "| serial | yes | 4 | 0 | 5.0 | 0.500 | 5.2 | 0.495 | 2.49 | 2.3 |" in page  # ratios to 3 decimals
    assert "Command: `python -m benchmarks.svmhmm_reference --svm-hmm D --C 100`" in page
