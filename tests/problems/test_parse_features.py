"""Arc features against a direct string-based implementation of the same templates."""

from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from cutplane.exceptions import InputError
from problems.parsing.features import DEFAULT_TEMPLATES, ArcFeaturizer, distance_bin

ROOT, BOS, EOS, UNK = ("ROOT",), ("BOS",), ("EOS",), ("UNK",)


def sent(forms, lemmas, upos, heads):
    return SimpleNamespace(
        forms=list(forms),
        lemmas=list(lemmas),
        upos=list(upos),
        xpos=["_"] * len(forms),
        heads=None if heads is None else np.array(heads),
    )


def ref_value(s, col, p, vocab):
    n = len(s.forms)
    if p <= -1:
        return BOS
    if p == 0:
        return ROOT
    if p > n:
        return EOS
    v = {"w": s.forms, "l": s.lemmas, "p": s.upos}[col][p - 1]
    return v if (vocab is None or v in vocab[col]) else UNK


def ref_arc(s, h, m, templates, distance, vocab):
    """Features of arc h -> m as hashable tuples, in the order of templates and positions."""
    d = abs(h - m)
    dd = (int(h > m), 10 if d > 10 else 5 if d > 5 else d)
    out = []
    specs = []
    for name, spec in templates.items():
        if distance in (True, "both"):
            specs.append((name, spec, dd))
        if distance in (False, "both"):
            specs.append((name + "/nd" if distance == "both" else name, spec, None))
    for name, spec, conj in specs:
        atoms = [a for a in spec.split("_") if a]
        vals = []
        between = False
        for a in atoms:
            if a == "bp":
                between = True
                vals.append("BP")
                continue
            anchor = h if a[0] == "h" else m
            off = int(a[2:]) if len(a) > 2 else 0
            vals.append(ref_value(s, a[1], anchor + off, vocab))
        if not between:
            out.append((name, conj, tuple(vals)))
        else:
            seen = []
            for p in range(min(h, m) + 1, max(h, m)):
                v = ref_value(s, "p", p, vocab)
                if v not in seen:
                    seen.append(v)
                    out.append((name, conj, tuple(v if x == "BP" else x for x in vals)))
    return out


def check_against_reference(fz, train, test, source, min_count, distance, templates, word_min=1):
    counts = {c: Counter(v for s in train for v in {"w": s.forms, "l": s.lemmas, "p": s.upos}[c]) for c in "wlp"}
    vocab = {c: {v for v, k in counts[c].items() if k >= (word_min if c != "p" else 1)} for c in "wlp"}
    freq = Counter()
    for s in train:
        n = len(s.forms)
        arcs = (
            [(int(s.heads[m - 1]), m) for m in range(1, n + 1)]
            if source == "gold"
            else [(h, m) for h in range(n + 1) for m in range(1, n + 1) if h != m]
        )
        for h, m in arcs:
            freq.update(ref_arc(s, h, m, templates, distance, vocab))
    kept = {f for f, c in freq.items() if c >= min_count}
    assert fz.dim_ == len(kept)
    names = fz.template_names_
    groups = fz.coordinate_groups()
    assert np.all(np.diff(groups) >= 0)
    mapping = {}
    for data in (train, test):
        X = fz.transform(data)
        assert X.dim == fz.dim_ and X.n_sentences == len(data)
        for i, s in enumerate(data):
            n = len(s.forms)
            for h in range(n + 1):
                for m in range(n + 1):
                    ids = X.arc(i, h, m)
                    if m == 0 or h == m:
                        assert ids.size == 0
                        continue
                    ref = [f for f in ref_arc(s, h, m, templates, distance, vocab) if f in kept]
                    assert len(ref) == ids.size
                    for f, j in zip(ref, ids):
                        assert mapping.setdefault(f, int(j)) == int(j)
                        assert names[groups[j]] == f[0]
    assert len(set(mapping.values())) == len(mapping)  # injective: no two features share an id


WORDS = ["a", "b", "c", "d"]
TAGS = ["N", "V", "P"]


@st.composite
def corpora(draw):
    def one():
        n = draw(st.integers(1, 7))
        forms = [draw(st.sampled_from(WORDS)) for _ in range(n)]
        upos = [draw(st.sampled_from(TAGS)) for _ in range(n)]
        order = draw(st.permutations(range(1, n + 1)))
        heads = [0] * n
        placed = [0]
        for m in order:
            heads[m - 1] = draw(st.sampled_from(placed))
            placed.append(m)
        return sent(forms, [f.upper() for f in forms], upos, heads)

    train = [one() for _ in range(draw(st.integers(1, 4)))]
    test = [one() for _ in range(draw(st.integers(1, 3)))]
    return train, test


SMALL = {
    "hw_hp": "hw_hp",
    "mp": "mp",
    "between_pos": "hp_bp_mp",
    "hp_hp+1_mp-1_mp": "hp_hp+1_mp-1_mp",
    "hl_ml": "hl_ml",
    "hw-2": "hw-2",
    "dist": "",
}


@settings(max_examples=40)
@given(corpora(), st.sampled_from(["gold", "all"]), st.integers(1, 3), st.sampled_from([True, False, "both"]))
def test_matches_string_reference(data, source, min_count, distance):
    train, test = data
    fz = ArcFeaturizer(SMALL, feature_source=source, min_count=min_count, distance=distance, chunk_size=2).fit(train)
    check_against_reference(fz, train, test, source, min_count, distance, SMALL)


def test_default_templates_and_unknown_words():
    train = [
        sent("the dog barks".split(), "the dog bark".split(), ["DET", "NOUN", "VERB"], [2, 3, 0]),
        sent("a cat sleeps .".split(), "a cat sleep .".split(), ["DET", "NOUN", "VERB", "PUNCT"], [2, 3, 0, 3]),
    ]
    test = [sent("the zebra sleeps".split(), "the zebra sleep".split(), ["DET", "NOUN", "VERB"], None)]
    fz = ArcFeaturizer(feature_source="all").fit(train)
    check_against_reference(fz, train, test, "all", 1, True, DEFAULT_TEMPLATES)
    fz = ArcFeaturizer(word_min_count=2, feature_source="all").fit(train)
    check_against_reference(fz, train, test, "all", 1, True, DEFAULT_TEMPLATES, word_min=2)


def test_distance_bins():
    np.testing.assert_array_equal(distance_bin(np.arange(1, 15)), [1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 10, 10, 10, 10])


def test_dist_template_counts_direction_and_bins():
    # 12 words: gold arcs of every direction and distance bin appear with feature_source="all"
    n = 12
    s = sent(["w"] * n, ["w"] * n, ["X"] * n, [0] + list(range(1, n)))
    fz = ArcFeaturizer({"dist": ""}, feature_source="all").fit([s])
    # right arcs: distances 1..12 -> bins {1,2,3,4,5,10}; left arcs: 1..11 -> same 6 bins
    assert fz.dim_ == 12


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(templates={"x": "hq"}), "bad atom"),
        (dict(templates={"x": "hp_bp_bp"}), "more than one bp"),
        (dict(templates=[]), "no templates"),
        (dict(pos="cpos"), "pos"),
        (dict(distance="yes"), "distance"),
        (dict(feature_source="gold-ish"), "feature_source"),
        (dict(min_count=0), "min_count"),
    ],
)
def test_bad_parameters(kwargs, msg):
    s = sent(["a"], ["a"], ["N"], [0])
    with pytest.raises(InputError, match=msg):
        ArcFeaturizer(**kwargs).fit([s])


def test_transform_before_fit_and_gold_needs_heads():
    s = sent(["a"], ["a"], ["N"], None)
    with pytest.raises(NotFittedError, match="not fitted"):
        ArcFeaturizer().transform([s])
    with pytest.raises(InputError, match="gold heads"):
        ArcFeaturizer().fit([s])


@pytest.mark.data
def test_danish_fit_transform_and_oracle(data_dir):
    from oracles.parse_oracle import ParseOracle
    from problems.io.conllu import read_conllu

    p = data_dir / "ud-danish-ddt"
    if not (p / "da_ddt-ud-dev.conllu.gz").exists():
        pytest.skip("UD Danish-DDT absent")
    dev = read_conllu(p / "da_ddt-ud-dev.conllu.gz")[:150]
    fz = ArcFeaturizer(min_count=1)
    X = fz.fit_transform(dev)
    assert X.n_sentences == 150 and X.dim == fz.dim_ > 10000
    assert fz.group_sizes().sum() == fz.dim_ and np.all(fz.group_sizes() > 0)
    # every gold arc carries at least one feature per template (gold features were all kept)
    for i, s in enumerate(dev[:20]):
        for m in range(1, len(s) + 1):
            ids = X.arc(i, int(s.heads[m - 1]), m)
            got = set(fz.coordinate_groups()[ids])
            n_between = 0 if abs(int(s.heads[m - 1]) - m) <= 1 else 1
            assert len(got) >= len(fz.template_names_) - (1 - n_between)
    oracle = ParseOracle(X, [s.tree() for s in dev], single_root=True)
    r0 = oracle(np.zeros(X.dim))
    # at w = 0 every tree scores 0; listing the words deepest-first as a chain under the root
    # gives a single-root tree with every head wrong when n >= 2, so R(0) = mean n_i [n_i >= 2]
    assert r0.value == pytest.approx(np.mean([len(s) if len(s) >= 2 else 0 for s in dev]))
    rng = np.random.default_rng(0)
    w1 = rng.normal(size=X.dim) * 0.1
    r1 = oracle(w1)
    assert r1.value >= 0.0  # UD gold trees are single-rooted, hence candidates
    for w2 in (np.zeros(X.dim), w1 + rng.normal(size=X.dim) * 0.1):
        assert oracle(w2).value >= r1.cut.slope.dot(w2).item() + r1.cut.offset - 1e-9
