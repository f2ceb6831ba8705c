"""CRF++ templates: parsing, feature strings at sentence edges, the grouped feature dictionary."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from cutplane.exceptions import InputError
from problems.sequence.feature_index import FeatureIndex, LabelAlphabet
from problems.sequence.templates import CHUNKING_TEMPLATES, parse_templates, read_templates

SMALL = [
    [("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("deficit", "NN")],
    [("the", "DT"), ("deficit", "NN")],
    [("He", "PRP")],
    [("the", "DT"), ("current", "JJ"), ("deficit", "NN"), (".", ".")],
]


def test_parse_chunking_set():
    tpls = parse_templates(CHUNKING_TEMPLATES)
    assert len(tpls) == 22
    assert [t.kind for t in tpls].count("U") == 21 and tpls[-1].kind == "B" and tpls[-1].name == "B"
    by_name = {t.name: t for t in tpls}
    assert by_name["U05"].macros == ((-1, 0), (0, 0))
    assert by_name["U30"].macros == ((-3, 0), (3, 1))
    assert by_name["U22"].macros == ((0, 1), (1, 1), (2, 1))
    # line numbers count comments and blank lines
    assert by_name["U12"].line == CHUNKING_TEMPLATES.splitlines().index("U12:%x[0,1]") + 1


@pytest.mark.parametrize(
    "text, line, what",
    [
        ("U00:%x[0,0]\nU01:%x[-2]\n", 2, "macro"),
        ("# c\n\nX00:%x[0,0]\n", 3, "start with"),
        ("U00:%x[0,-1]\n", 1, "column"),
        ("U00:%y[0,0]\n", 1, "macro"),
    ],
)
def test_bad_syntax_names_the_line(text, line, what):
    with pytest.raises(InputError) as err:
        parse_templates(text, path="tpl.txt")
    assert err.value.line == line
    assert err.value.path == "tpl.txt"
    assert what in str(err.value)
    assert f"tpl.txt:{line}:" in str(err.value)


def test_empty_template_text_is_an_error():
    with pytest.raises(InputError):
        parse_templates("# only a comment\n\n")


def test_read_templates_from_file(tmp_path):
    p = tmp_path / "template"
    p.write_text(CHUNKING_TEMPLATES, encoding="utf-8")
    assert [t.name for t in read_templates(p)] == [t.name for t in parse_templates(CHUNKING_TEMPLATES)]
    p.write_bytes(b"U00:%x[0,0]\nU01:\xff%x[1,0]\n")
    with pytest.raises(InputError) as err:
        read_templates(p)
    assert err.value.line == 2


def test_edge_rows_use_crfpp_placeholders():
    tpls = {t.name: t for t in parse_templates("U0:%x[-2,0]\nU1:%x[2,0]/%x[-1,1]\nU2:%x[0,0]/%x[3,1]\nU\n")}
    cols = [("a", "b"), ("A", "B")]  # two tokens, column-major
    assert tpls["U0"].features(cols, 2) == ["U0:_B-2", "U0:_B-1"]
    assert tpls["U1"].features(cols, 2) == ["U1:_B+1/_B-1", "U1:_B+2/A"]
    assert tpls["U2"].features(cols, 2) == ["U2:a/_B+2", "U2:b/_B+3"]
    assert tpls["U"].features(cols, 2) == ["U", "U"]


@settings(max_examples=200)
@given(
    st.lists(st.tuples(st.integers(-4, 4), st.integers(0, 1)), min_size=1, max_size=4),
    st.lists(st.tuples(st.sampled_from("abc{}"), st.sampled_from("XY")), min_size=1, max_size=6),
    st.sampled_from(["/", "{}", "", "-"]),
)
def test_fast_path_equals_token_by_token(macros, sentence, sep):
    text = "U9:" + sep.join(f"%x[{r},{c}]" for r, c in macros) + "!"
    tpl = parse_templates(text)[0]
    cols = list(zip(*sentence))
    n = len(sentence)
    fast = tpl.features(cols, n)
    slow = [tpl.feature(cols, t) for t in range(n)]
    assert fast == slow
    # the expansion written independently of the class
    for t in range(n):
        vals = []
        for r, c in macros:
            s = t + r
            vals.append(sentence[s][c] if 0 <= s < n else (f"_B{s}" if s < 0 else f"_B+{s - n + 1}"))
        assert fast[t] == "U9:" + sep.join(vals) + "!"


def independent_counts(templates_text, corpus):
    """Feature string -> count, by applying each template token by token."""
    tpls = [t for t in parse_templates(templates_text) if t.kind == "U"]
    counts = Counter()
    for sent in corpus:
        cols = list(zip(*sent))
        for t in range(len(sent)):
            for tpl in tpls:
                counts[tpl.feature(cols, t)] += 1
    return counts


@pytest.mark.parametrize("min_count", [1, 2, 3])
def test_dictionary_groups_and_min_count(min_count):
    text = "U00:%x[0,0]\nU01:%x[-1,0]/%x[0,1]\nB\nU02:%x[1,1]\nU\n"
    fi = FeatureIndex(text, min_count=min_count)
    X = fi.fit_transform(SMALL)
    counts = independent_counts(text, SMALL)
    expected = {s for s, c in counts.items() if c >= min_count}
    assert set(fi.vocabulary_) == expected
    assert fi.n_features_ == len(expected)
    assert sorted(fi.vocabulary_.values()) == list(range(fi.n_features_))
    # each feature in exactly one group: the template whose name prefixes it; groups are contiguous
    names = fi.template_names
    for s, k in fi.vocabulary_.items():
        g = fi.feature_groups_[k]
        assert s == names[g] or s.startswith(names[g] + ":")
        assert fi.group_offsets_[g] <= k < fi.group_offsets_[g + 1]
        assert fi.feature_counts_[k] == counts[s]
    assert fi.group_offsets_[2] == fi.group_offsets_[3]  # B has no unigram features
    # per-token ids = the kept features of that token
    tpls = [t for t in fi.templates if t.kind == "U"]
    pos = 0
    for sent in SMALL:
        cols = list(zip(*sent))
        for t in range(len(sent)):
            want = sorted(fi.vocabulary_[tp.feature(cols, t)] for tp in tpls if tp.feature(cols, t) in expected)
            assert X.indices[X.indptr[pos] : X.indptr[pos + 1]].tolist() == want
            pos += 1
    assert X.sentence_ptr.tolist() == [0, 4, 6, 7, 11]


def test_transform_ignores_unseen_and_coordinate_groups():
    text = "U00:%x[0,0]\nB\nU01:%x[0,1]\n"
    fi = FeatureIndex(text)
    fi.fit(SMALL)
    X = fi.transform([[("the", "NN"), ("unseen", "XX")]])
    assert X.indices.tolist() == [fi.vocabulary_["U00:the"], fi.vocabulary_["U01:NN"]]
    assert X.indptr.tolist() == [0, 2, 2]
    K = 3
    groups = fi.coordinate_groups(K)
    assert groups.shape == (fi.dim(K),) == (fi.n_features_ * K + K * K,)
    assert np.all(groups[-K * K :] == 1)  # the B template is template index 1
    W_groups = groups[: -K * K].reshape(fi.n_features_, K)
    assert np.all(W_groups == fi.feature_groups_[:, None])
    assert set(np.unique(groups)) == {0, 1, 2}
    dense = X.to_csr().toarray()
    assert dense.shape == (2, fi.n_features_) and dense.sum() == 2


@settings(max_examples=40, deadline=None)
@given(
    tokens=st.lists(
        st.lists(st.text(alphabet=st.sampled_from("ab\0é"), min_size=1, max_size=3), min_size=1, max_size=4),
        min_size=1,
        max_size=4,
    )
)
def test_the_fitted_dictionary_is_kept_as_joined_names_and_made_again_alike(tokens):
    """After fitting, the strings are held joined (no dictionary) unless one holds the
    separator; ``feature_names``, ``vocabulary_``, ``transform`` and a pickle give what the
    dictionary gave."""
    import pickle

    sentences = [[(t, "X") for t in sent] for sent in tokens]
    fi = FeatureIndex("U00:%x[0,0]\nU01:%x[-1,0]\n")
    X = fi.fit_transform(sentences)
    compact = fi.__dict__.get("_vocabulary") is None
    assert compact == (not any("\0" in t for sent in tokens for t in sent))
    names = fi.feature_names()  # from the joined names, without the dictionary
    assert compact == (fi.__dict__.get("_vocabulary") is None)
    again = pickle.loads(pickle.dumps(fi))
    vocab = fi.vocabulary_
    assert vocab == {s: k for k, s in enumerate(names)} and len(vocab) == fi.n_features_
    assert set(vocab) == set(independent_counts("U00:%x[0,0]\nU01:%x[-1,0]\n", sentences))
    assert fi.__dict__.get("_vocabulary_names") is None  # the dictionary replaces the joined names
    assert again.vocabulary_ == vocab and again.feature_names() == names
    Y = again.transform(sentences)
    np.testing.assert_array_equal(Y.indices, X.indices)
    np.testing.assert_array_equal(Y.indptr, X.indptr)


def test_an_index_without_features_keeps_an_empty_dictionary():
    fi = FeatureIndex("U00:%x[0,0]\n", min_count=5)
    fi.fit([[("a", "X")]])
    assert fi.n_features_ == 0 and fi.feature_names() == [] and fi.vocabulary_ == {}
    assert fi.transform([[("a", "X")]]).indices.size == 0


def test_too_few_columns_is_an_input_error():
    fi = FeatureIndex("U00:%x[0,2]\n")
    with pytest.raises(InputError) as err:
        fi.fit(SMALL)
    assert "columns" in str(err.value)
    with pytest.raises(NotFittedError, match="not fitted"):
        FeatureIndex("U00:%x[0,0]\n").transform(SMALL)


def test_label_alphabet_unknown_label_names_file_and_line():
    lab = LabelAlphabet.fit([["B-NP", "I-NP"], ["O"]])
    assert lab.labels == ["B-NP", "I-NP", "O"]
    assert lab.encode(["O", "B-NP"]).tolist() == [2, 0]
    with pytest.raises(InputError) as err:
        lab.encode_corpus([["O"], ["B-NP", "B-VP"]], path="test.txt", first_lines=[1, 3])
    assert err.value.path == "test.txt" and err.value.line == 4 and err.value.field == "label"
    assert lab.decode([2, 1]) == ["O", "I-NP"]


@pytest.mark.data
def test_chunking_templates_on_a_conll2000_prefix(data_dir):
    from problems.io.conll import read_conll

    corpus = read_conll(data_dir / "conll2000-chunking" / "train.txt.gz", n_columns=3)
    part = corpus.inputs[:300]
    fi = FeatureIndex(CHUNKING_TEMPLATES)
    X = fi.fit_transform(part)
    counts = independent_counts(CHUNKING_TEMPLATES, part)
    assert fi.n_features_ == len(counts)
    assert X.indices.size == 21 * sum(len(s) for s in part)  # every token fires every U template
    assert len(set(fi.feature_groups_.tolist())) == 21


@pytest.mark.data
@pytest.mark.slow
def test_chunking_templates_on_conll2000_train(data_dir):
    """ANCHORS.md: CRF++'s chunking templates give 460,638 features and 22 labels on train."""
    from problems.io.conll import read_conll

    corpus = read_conll(data_dir / "conll2000-chunking" / "train.txt.gz", n_columns=3)
    fi = FeatureIndex(CHUNKING_TEMPLATES)
    X = fi.fit_transform(corpus.inputs)
    assert fi.n_features_ == 460_638
    assert len(LabelAlphabet.fit(corpus.labels)) == 22
    assert X.n_tokens == 211_727


# ---------------------------------------------------------------- CRF++'s template language in full
def test_unnamed_templates_repeated_names_and_several_bigrams_parse_as_crfpp():
    text = "U%x[-1,0]\nU%x[1,0]\nU01%x[0,0]\nU00:%x[0,0]\nU00:%x[0,1]\nB\nB\nB01:%x[0,1]\nB%x[0,0]\n"
    tpls = parse_templates(text, path="t.tpl")
    assert [t.name for t in tpls] == ["U", "U", "U01", "U00", "U00", "B", "B", "B01", "B"]
    assert [t.conditioned for t in tpls] == [False] * 7 + [True, True]
    assert tpls[0].path == "t.tpl" and tpls[7].line == 8
    from problems.sequence.templates import template_groups

    assert template_groups(tpls) == ["U", "U01", "U00", "B", "B01"]


def test_bag_of_words_templates_share_their_features():
    """``U%x[-1,0]`` and ``U%x[1,0]`` both expand to ``U<word>``: one feature, counted twice where
    both sides carry the same word (CRF++ adds the feature once per template)."""
    fi = FeatureIndex("U%x[-1,0]\nU%x[1,0]\n")
    X = fi.fit_transform([[("a",), ("b",), ("a",)]])
    assert fi.template_names == ["U"]
    assert set(fi.vocabulary_) == {"U_B-1", "Ub", "Ua", "U_B+1"}
    assert fi.feature_counts_[fi.vocabulary_["Ub"]] == 2  # tokens 0 and 2
    rows = [X.indices[X.indptr[t] : X.indptr[t + 1]].tolist() for t in range(3)]
    v = fi.vocabulary_
    assert rows == [sorted([v["U_B-1"], v["Ub"]]), [v["Ua"], v["Ua"]], sorted([v["Ub"], v["U_B+1"]])]
    assert X.to_csr().toarray()[1, v["Ua"]] == 2


def test_conditioned_bigrams_layout_and_strings():
    text = "U00:%x[0,0]\nB\nB01:%x[0,1]\nU01:%x[0,1]\n"
    fi = FeatureIndex(text)
    X = fi.fit_transform(SMALL)
    assert fi.conditioned and not fi.has_transitions and fi.transition_group is None
    assert fi.template_names == ["U00", "B", "B01", "U01"]
    # bigram strings at tokens t >= 1 only (the first token of a sentence has no label pair)
    n_pairs = sum(len(s) - 1 for s in SMALL)
    want = Counter(["B"] * n_pairs + [f"B01:{tok[1]}" for s in SMALL for tok in s[1:]])
    assert {s: int(fi.bigram_feature_counts_[k]) for s, k in fi.bigram_vocabulary_.items()} == dict(want)
    assert fi.bigram_feature_names()[0] == "B"
    assert X.bigram_features is not None and X.n_bigram_features == fi.n_bigram_features_ == len(want)
    for i in range(len(SMALL)):
        t0 = X.sentence_ptr[i]
        assert X.bigram_indptr[t0 + 1] == X.bigram_indptr[t0]  # nothing at the first token
    K = 3
    groups = fi.coordinate_groups(K)
    assert groups.shape == (fi.dim(K),) == (fi.n_features_ * K + fi.n_bigram_features_ * K * K,)
    tail = groups[fi.n_features_ * K :].reshape(fi.n_bigram_features_, K * K)
    assert np.all(tail == fi.bigram_feature_groups_[:, None])
    assert set(fi.bigram_feature_groups_.tolist()) == {1, 2}
    # one bare B stays the plain layout
    plain = FeatureIndex("U00:%x[0,0]\nB\n")
    assert plain.fit_transform(SMALL).bigram_features is None and plain.has_transitions and not plain.conditioned


_PIECES = st.sampled_from(["%x[-1,0]", "%x[0,0]", "%x[1,0]", "%x[0,1]", "%x[2,1]", "/", "x"])


@st.composite
def template_text(draw):
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from("UB"))
        name = draw(st.sampled_from(["", "0:", "1:", "0", ":"]))
        body = "".join(draw(st.lists(_PIECES, max_size=3)))
        lines.append(kind + name + body)
    return "\n".join(lines) + "\n"


_CORPUS = st.lists(
    st.lists(st.tuples(st.sampled_from(["a", "b", "0:a"]), st.sampled_from(["X", "Y"])), min_size=1, max_size=4),
    min_size=1,
    max_size=4,
)


@settings(max_examples=150, deadline=None)
@given(template_text(), _CORPUS, st.integers(1, 3))
def test_dictionary_against_a_token_by_token_expansion(text, corpus, min_count):
    """Any mix of named / unnamed / repeated / bigram templates: the dictionary and the per-token
    ids are those of expanding every template at every token (bigram ones at t >= 1), with the
    counts over the corpus and CRF++'s cutoff; features of one group have contiguous ids."""
    fi = FeatureIndex(text, min_count=min_count)
    X = fi.fit_transform(corpus)
    tpls = fi.templates
    names = fi.template_names
    per_token = {"U": [], "B": []}
    counts = {"U": Counter(), "B": Counter()}
    produced_by: dict = {}  # string -> groups of the templates that produce it
    for sent in corpus:
        cols = list(zip(*sent))
        for t in range(len(sent)):
            for kind in "UB":
                strs = []
                for tp in tpls:
                    if tp.kind == kind and (kind == "U" or t >= 1):
                        strs.append(tp.feature(cols, t))
                        produced_by.setdefault(strs[-1], set()).add(names.index(tp.name))
                per_token[kind].append(strs)
                counts[kind].update(strs)
    kept = {k: {s for s, c in counts[k].items() if c >= min_count} for k in "UB"}
    assert set(fi.vocabulary_) == kept["U"]
    for s, k in fi.vocabulary_.items():  # one feature per string, in the first group producing it
        g = fi.feature_groups_[k]
        assert g == min(produced_by[s])
        assert fi.group_offsets_[g] <= k < fi.group_offsets_[g + 1]
        assert fi.feature_counts_[k] == counts["U"][s]
    inv = fi.feature_names()
    for t, strs in enumerate(per_token["U"]):
        got = [inv[k] for k in X.indices[X.indptr[t] : X.indptr[t + 1]]]
        assert Counter(got) == Counter(s for s in strs if s in kept["U"])
        assert got == sorted(got, key=fi.vocabulary_.__getitem__)
    if fi.conditioned:
        assert set(fi.bigram_vocabulary_) == kept["B"]
        binv = fi.bigram_feature_names()
        for t, strs in enumerate(per_token["B"]):
            got = [binv[k] for k in X.bigram_indices[X.bigram_indptr[t] : X.bigram_indptr[t + 1]]]
            assert Counter(got) == Counter(s for s in strs if s in kept["B"])
        assert np.all(np.diff(fi.bigram_feature_groups_) >= 0)
        for s, k in fi.bigram_vocabulary_.items():
            assert fi.bigram_feature_groups_[k] == min(produced_by[s])
    else:
        assert X.bigram_features is None
        assert fi.has_transitions == any(tp.kind == "B" for tp in tpls)
    # transform of the training corpus gives the same ids
    again = fi.transform(corpus)
    assert np.array_equal(again.indices, X.indices) and np.array_equal(again.indptr, X.indptr)
    if fi.conditioned:
        assert np.array_equal(again.bigram_indices, X.bigram_indices)


def test_missing_column_names_the_template_file_line_and_name(tmp_path):
    from problems.sequence.templates import check_template_columns

    p = tmp_path / "template"
    p.write_text("# words and tags\nU00:%x[0,0]\n\nU30:%x[-1,0]/%x[1,2]\nB\n", encoding="utf-8")
    tpls = read_templates(p)
    with pytest.raises(InputError) as err:
        check_template_columns(tpls, 2, data_path="train.data", line=1)
    e = err.value
    assert e.path == str(p) and e.line == 4 and "'U30'" in e.message and "train.data" in e.message
    assert "column 2" in e.message and "2 input column" in e.message
    check_template_columns(tpls, 3)  # enough columns: nothing to say
    with pytest.raises(InputError, match=r"template 'U30' \(.*line 4\)"):
        FeatureIndex(tpls).fit(SMALL)
