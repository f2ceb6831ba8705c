"""DependencyParser: certificates, template selection, valid / projective trees, model files,
bad input, the objective against a direct cvxpy solve on an enumerable treebank, and
solver=SPOM(...) (its objective close to the certified cutting-plane optimum; the per-sentence
oracle it reads is tested in tests/oracles/test_parse_examples.py)."""

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from cutplane.exceptions import InputError, ModelFormatError
from oracles.brute_force.trees import enumerate_trees
from oracles.parsing import is_projective, is_tree
from problems.io.conllu import ConlluSentence
from problems.parsing.parser import DependencyParser, TreeDecoder, parse_arc_templates
from problems.solvers import SPOM, CuttingPlane

# the gold heads depend on POS (and distance) only; words and lemmas are noise
INFORMATIVE = {"hp_mp": "hp_mp", "between": "hp_bp_mp", "dist": ""}
NOISE = {"hw": "hw", "mw": "mw", "hl_ml": "hl_ml"}
TEMPLATES = {**INFORMATIVE, **NOISE}
_POS = ("NOUN", "VERB", "ADJ", "ADP", "PUNCT")


def make_sentence(pos, rng, n_words=30, heads=True):
    """A sentence with the given POS, random words and lemmas, and gold heads by the rule:
    word 1 attaches to the root, every later word to the nearest preceding NOUN."""
    n = len(pos)
    forms = [f"w{rng.integers(n_words)}" for _ in range(n)]
    lemmas = [f"l{rng.integers(n_words)}" for _ in range(n)]
    h = None
    if heads:
        h = np.zeros(n, np.int64)
        last = 0
        for k in range(n):
            h[k] = last if k > 0 else 0
            if pos[k] == "NOUN":
                last = k + 1
    return ConlluSentence(
        forms=forms, lemmas=lemmas, upos=list(pos), xpos=["_"] * n, feats=["_"] * n, heads=h, deprels=["dep"] * n
    )


def make_treebank(n_sentences, seed, min_len=3, max_len=9):
    """Sentences starting with a NOUN, POS otherwise uniform (the rule gives projective,
    single-rooted trees)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_sentences):
        n = int(rng.integers(min_len, max_len + 1))
        pos = ["NOUN"] + [_POS[i] for i in rng.integers(len(_POS), size=n - 1)]
        out.append(make_sentence(pos, rng))
    return out


@pytest.fixture(scope="module")
def data():
    return make_treebank(60, seed=0), make_treebank(60, seed=1)


@pytest.fixture(scope="module")
def fitted(data):
    train, _ = data
    mtl = DependencyParser(TEMPLATES, C=10.0, regularizer="mtl", solver=CuttingPlane(eps=0.05)).fit(train)
    ssvm = DependencyParser(TEMPLATES, C=10.0, regularizer="ssvm", solver=CuttingPlane(eps=0.05)).fit(train)
    return mtl, ssvm


def test_certificates(fitted):
    for est in fitted:
        h = est.result_.history
        assert est.result_.status == "converged"
        assert est.gap_ <= 0.05 + 1e-12
        assert est.lower_bound_ <= est.objective_ + 1e-9
        assert np.all(np.diff(h.lower) >= -1e-12)
        assert np.all(h.lower <= h.best_upper + 1e-9)
        assert est.objective_ == pytest.approx(10.0 * est.result_.objective)


def test_mtl_drops_noise_templates(data, fitted):
    _, test = data
    mtl, ssvm = fitted
    norms = mtl.template_norms_
    top = max(norms.values())
    for name in NOISE:
        assert norms[name] <= 1e-5 * top, (name, norms[name])
        assert name not in mtl.active_templates_
        assert mtl.template_weights_[name] <= 1e-5
    assert sum(mtl.template_weights_.values()) == pytest.approx(1.0, abs=1e-6)
    assert mtl.n_active_templates_ == len(mtl.active_templates_) <= len(INFORMATIVE)
    # SSVM puts weight on the word templates
    assert all(ssvm.template_norms_[name] > 1e-3 for name in NOISE)
    assert mtl.score(test) >= ssvm.score(test) - 1e-12
    assert mtl.score(test) > 0.95


def test_predictions_are_single_rooted_trees_and_skipping_is_exact(data, fitted):
    _, test = data
    mtl, ssvm = fitted
    rng = np.random.default_rng(5)
    # POS in any order (not only the training distribution): still valid trees
    shuffled = [make_sentence([_POS[i] for i in rng.integers(len(_POS), size=len(s))], rng, heads=False) for s in test]
    for est in fitted:
        for sents in (test, shuffled):
            pred = est.predict(sents)
            assert [len(p) for p in pred] == [len(s) for s in sents]
            for p in pred:
                tree = np.concatenate(([-1], p))
                assert is_tree(tree, single_root=True)
    assert mtl.n_active_templates_ < len(TEMPLATES)
    for sents in (test, shuffled):
        a = mtl.predict(sents)
        b = mtl.predict(sents, all_templates=True)
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_projective_gives_projective_trees(data):
    train, _ = data
    est = DependencyParser(
        TEMPLATES, C=1.0, regularizer="ssvm", decoder=TreeDecoder(projective=True), solver=CuttingPlane(eps=0.05)
    ).fit(train)
    rng = np.random.default_rng(7)
    # word features seen in training, random POS: the arc scores favour crossing arcs sometimes
    sents = [make_sentence([_POS[i] for i in rng.integers(len(_POS), size=8)], rng, heads=False) for _ in range(200)]
    pred = est.predict(sents)
    assert all(is_projective(np.concatenate(([-1], p))) for p in pred)
    assert all(is_tree(np.concatenate(([-1], p)), single_root=True) for p in pred)
    est.set_params(decoder__projective=False)  # same weights, unrestricted decoder: some trees cross
    free = est.predict(sents)
    assert any(not is_projective(np.concatenate(([-1], p))) for p in free)


def test_save_load_roundtrip(tmp_path, data, fitted):
    _, test = data
    mtl, _ = fitted
    path = mtl.save(tmp_path / "parser.npz")
    back = DependencyParser.load(path)
    assert all(np.array_equal(a, b) for a, b in zip(back.predict(test), mtl.predict(test)))
    assert back.template_weights_ == mtl.template_weights_
    assert back.active_templates_ == mtl.active_templates_
    assert back.gap_ == mtl.gap_ and back.objective_ == mtl.objective_
    np.testing.assert_array_equal(back.coef_, mtl.coef_)
    data_bytes = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data_bytes[: len(data_bytes) // 2])
    with pytest.raises(ModelFormatError):
        DependencyParser.load(tmp_path / "cut.npz")


def _enumerated_optimum(parser, sentences, C, regularizer):
    """min Omega(w) + C/n sum_i max_y [Delta + <w, Phi(y) - Phi(y_i)>] over all trees, by cvxpy
    (n-slack form with every tree of every sentence as a constraint)."""
    import cvxpy as cp

    fz = parser.featurizer_
    feats = fz.transform(sentences)
    dim = fz.dim_
    w = cp.Variable(dim)
    xi = cp.Variable(len(sentences))
    cons = []
    for i, s in enumerate(sentences):
        gold = np.concatenate(([-1], s.heads))
        phi_gold = feats.phi(i, gold).toarray().ravel()
        trees = enumerate_trees(len(s), single_root=True)
        rows = np.stack([feats.phi(i, t).toarray().ravel() - phi_gold for t in trees])
        loss = np.array([np.sum(t[1:] != gold[1:]) for t in trees], dtype=float)
        cons.append(xi[i] >= loss + rows @ w)
    groups = fz.coordinate_groups()
    if regularizer == "ssvm":
        omega = 0.5 * cp.sum_squares(w)
    else:
        omega = 0.5 * cp.square(
            cp.sum(cp.hstack([cp.norm(w[np.flatnonzero(groups == j)], 2) for j in np.unique(groups)]))
        )
    prob = cp.Problem(cp.Minimize(omega + C * cp.sum(xi) / len(sentences)), cons)
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.mark.parametrize("regularizer", ["mtl", "ssvm"])
def test_objective_matches_direct_cvxpy_solve(regularizer):
    sents = make_treebank(4, seed=3, min_len=2, max_len=4)
    C = 5.0
    est = DependencyParser(
        {"hp_mp": "hp_mp", "mw": "mw", "dist": ""}, C=C, regularizer=regularizer, solver=CuttingPlane(eps=1e-4)
    ).fit(sents)
    opt = _enumerated_optimum(est, sents, C, regularizer)
    assert est.lower_bound_ - 1e-5 <= opt <= est.objective_ + 1e-5
    assert est.objective_ - opt <= 1e-4 + 1e-5


def test_parse_arc_templates():
    text = "# comment\nhp_mp\nbetween = hp_bp_mp  # in-between POS\n\ndist =\n"
    assert parse_arc_templates(text) == {"hp_mp": "hp_mp", "between": "hp_bp_mp", "dist": ""}
    with pytest.raises(InputError) as err:
        parse_arc_templates("hp_mp\nbad = hq_mp\n", path="t.txt")
    assert err.value.line == 2
    with pytest.raises(InputError):
        parse_arc_templates("hp\nhp\n")
    with pytest.raises(InputError):
        parse_arc_templates("# nothing\n")


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(C=0.0), "C"),
        (dict(C=-1.0), "C"),
        (dict(solver=CuttingPlane(eps=0.0)), "eps"),
        (dict(regularizer="nope"), "regularizer"),
        (dict(regularizer="pmtl", p=1.0), "p"),
        (dict(decoder=TreeDecoder(projective="yes")), "projective"),
        (dict(decoder="eisner"), "decoder"),
        (dict(solver="CLARABEL"), "solver"),
        (dict(solver="spom"), "solver"),
        (dict(solver=SPOM(epochs=0)), "epochs"),
        (dict(solver=SPOM(eta0=-1.0)), "eta0"),
        (dict(normalize_loss="no"), "normalize_loss"),
        (dict(pos="lemma"), "pos"),
    ],
)
def test_bad_hyper_parameters(data, kwargs, field):
    with pytest.raises(InputError) as err:
        DependencyParser(TEMPLATES, **kwargs).fit(data[0][:5])
    assert err.value.field == field


def test_bad_data(data):
    train, test = data
    est = DependencyParser(TEMPLATES)
    with pytest.raises(InputError):
        est.fit([])
    with pytest.raises(NotFittedError):
        est.predict(test)  # not fitted
    rng = np.random.default_rng(0)
    no_heads = make_sentence(["NOUN", "VERB"], rng, heads=False)
    with pytest.raises(InputError):
        est.fit([train[0], no_heads])
    two_roots = make_sentence(["NOUN", "VERB", "ADJ"], rng)
    two_roots.heads = np.array([0, 0, 1])
    with pytest.raises(InputError, match="single_root"):
        est.fit([train[0], two_roots])
    cycle = make_sentence(["NOUN", "VERB", "ADJ"], rng)
    cycle.heads = np.array([0, 3, 2])
    with pytest.raises(InputError, match="not a tree"):
        est.fit([cycle])
    out_of_range = make_sentence(["NOUN", "VERB"], rng)
    out_of_range.heads = np.array([0, 5])
    with pytest.raises(InputError):
        est.fit([out_of_range])
    with pytest.raises(InputError):
        DependencyParser(TEMPLATES, C=1.0).fit("not a list")


def test_multi_root_and_nonprojective_warning():
    rng = np.random.default_rng(2)
    s = make_sentence(["NOUN", "VERB", "NOUN", "ADJ"], rng)
    s.heads = np.array([0, 0, 0, 3])  # three children of the root
    est = DependencyParser(TEMPLATES, C=1.0, decoder=TreeDecoder(single_root=False), solver=CuttingPlane(eps=0.05)).fit(
        [s, s]
    )
    assert est.result_.status == "converged"
    crossing = make_sentence(["NOUN", "VERB", "NOUN", "ADJ"], rng)
    crossing.heads = np.array([0, 3, 1, 2])  # 0->1, 1->3, 3->2, 2->4: arcs 1-3 and 2-4 cross
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DependencyParser(TEMPLATES, C=1.0, decoder=TreeDecoder(projective=True), solver=CuttingPlane(eps=0.05)).fit(
            [crossing]
        )
    assert is_tree(np.concatenate(([-1], crossing.heads)))
    assert not is_projective(np.concatenate(([-1], crossing.heads)))
    assert any("not projective" in str(w.message) for w in caught)


@pytest.fixture(scope="module")
def featurized(data):
    from problems.parsing.features import ArcFeaturizer

    train, test = data
    fz = ArcFeaturizer(TEMPLATES, distance="both").fit(train)
    return fz, test[:8], fz.transform(test[:8])


@settings(max_examples=30)
@given(keep=st.sets(st.sampled_from([*TEMPLATES, *(t + "/nd" for t in TEMPLATES)])), seed=st.integers(0, 2**16))
def test_restricted_featurizer_scores_equal_masked_weights(featurized, keep, seed):
    fz, sents, full = featurized
    w = np.random.default_rng(seed).normal(size=fz.dim_)
    sub = fz.restrict(keep)
    assert sub.template_names_ == [t for t in fz.template_names_ if t in keep]
    ids = [fz.template_names_.index(k) for k in keep]
    masked = np.where(np.isin(fz.coordinate_groups(), ids), w, 0.0)
    part = sub.transform(sents)
    assert part.dim == len(sub.columns_) == int(np.isin(fz.coordinate_groups(), ids).sum())
    for i in range(len(sents)):
        np.testing.assert_allclose(part.scores(i, w[sub.columns_]), full.scores(i, masked), atol=1e-12)


def test_featurizer_state_roundtrip(featurized):
    from problems.parsing.features import ArcFeaturizer

    fz, sents, full = featurized
    arrays, meta = fz.get_state()
    back = ArcFeaturizer.from_state(arrays, json.loads(json.dumps(meta, sort_keys=True)))
    assert back.template_names_ == fz.template_names_
    again = back.transform(sents)
    np.testing.assert_array_equal(again.indptr, full.indptr)
    np.testing.assert_array_equal(again.indices, full.indices)
    with pytest.raises(InputError):
        fz.restrict(["no such template"])
    bad = dict(arrays, keys=arrays["keys"][::-1].copy())
    with pytest.raises(ModelFormatError):
        ArcFeaturizer.from_state(bad, meta)
    with pytest.raises(ModelFormatError):
        ArcFeaturizer.from_state(arrays, dict(meta, template_names=meta["template_names"][::-1]))


# ---------------------------------------------------------------------------- SPOM
@pytest.mark.parametrize("regularizer", ["mtl", "ssvm"])
def test_spom_reaches_the_cutting_plane_objective(regularizer):
    """Same F, same decoder: SPOM after 40 epochs is within 3% of the certified optimum and never
    below the certified lower bound."""
    train = make_treebank(40, seed=0)
    cp = DependencyParser(TEMPLATES, C=1.0, regularizer=regularizer, solver=CuttingPlane(eps=1e-3)).fit(train)
    sp = DependencyParser(TEMPLATES, C=1.0, regularizer=regularizer, solver=SPOM(epochs=40, eta0=0.1, seed=0)).fit(
        train
    )
    assert sp.lower_bound_ is None and sp.gap_ is None and sp.n_iter_ == 40
    assert sp.objective_ >= cp.lower_bound_ - 1e-6
    assert sp.objective_ <= 1.03 * cp.objective_
    hist = sp.result_.history.objective
    assert hist[-1] - cp.objective_ < 0.1 * (hist[0] - cp.objective_)  # hist[0] = F(0)
    pred = sp.predict(train[:10])
    assert all(is_tree(np.concatenate(([-1], p)), single_root=True) for p in pred)
    assert all(np.array_equal(a, b) for a, b in zip(pred, sp.predict(train[:10], all_templates=True)))


def test_spom_model_roundtrip(tmp_path, data):
    train, test = data
    sp = DependencyParser(TEMPLATES, C=1.0, solver=SPOM(epochs=3, eta0=0.1)).fit(train[:20])
    back = DependencyParser.load(sp.save(tmp_path / "spom.npz"))
    assert back.solver == SPOM(epochs=3, eta0=0.1) and back.lower_bound_ is None and back.gap_ is None
    assert back.objective_ == sp.objective_
    assert all(np.array_equal(a, b) for a, b in zip(back.predict(test), sp.predict(test)))


# ------------------------------------------------------------------ engine options (checkpoint, executor)
def _interrupt_at(k):
    """A callback raising KeyboardInterrupt (as Ctrl-C would) at iteration k."""

    def callback(info):
        if info.iteration == k:
            raise KeyboardInterrupt

    return callback


def test_interrupt_then_resume_reaches_the_uninterrupted_objective(tmp_path):
    from cutplane.exceptions import ConvergenceWarning

    train = make_treebank(25, seed=4)
    eps = 1e-3
    kw = dict(C=2.0, regularizer="mtl")
    full = DependencyParser(TEMPLATES, solver=CuttingPlane(eps=eps), **kw).fit(train)
    assert full.result_.status == "converged" and full.n_iter_ > 4
    ckpt = tmp_path / "parser.ckpt.npz"
    with pytest.warns(ConvergenceWarning):
        first = DependencyParser(
            TEMPLATES, solver=CuttingPlane(eps=eps, checkpoint=ckpt, checkpoint_every=2), **kw
        ).fit(train, callback=_interrupt_at(3))
    assert first.result_.status == "interrupted" and first.n_iter_ == 3 and ckpt.exists()
    assert first.gap_ > eps
    resumed = DependencyParser(TEMPLATES, solver=CuttingPlane(eps=eps, checkpoint=ckpt, resume=True), **kw).fit(train)
    assert resumed.result_.status == "converged" and resumed.gap_ <= eps
    assert resumed.n_iter_ > first.n_iter_  # counted over both runs: it continued, did not restart
    # both certified within eps of the same optimum
    assert abs(resumed.objective_ - full.objective_) <= eps
    assert resumed.lower_bound_ <= full.objective_ + 1e-9 and full.lower_bound_ <= resumed.objective_ + 1e-9
    # other hyper-parameters: the checkpoint is refused, not silently used
    with pytest.raises(ModelFormatError, match="different problem"):
        DependencyParser(TEMPLATES, solver=CuttingPlane(eps=eps, checkpoint=ckpt, resume=True), **dict(kw, C=3.0)).fit(
            train
        )


def test_memory_limit_and_threads_executor_give_the_same_optimum():
    train = make_treebank(20, seed=6)
    kw = dict(C=2.0, regularizer="mtl")
    ref = DependencyParser(TEMPLATES, solver=CuttingPlane(eps=1e-3), **kw).fit(train)
    budget = DependencyParser(TEMPLATES, solver=CuttingPlane(eps=1e-3, memory_limit=25_000), **kw).fit(train)
    threads = DependencyParser(TEMPLATES, solver=CuttingPlane(eps=1e-3, executor="threads", n_workers=2), **kw).fit(
        train
    )
    for est in (budget, threads):
        assert est.result_.status == "converged"
        assert abs(est.objective_ - ref.objective_) <= 1e-3
    # the budget binds (the unbudgeted run needs more) and holds to within one cut
    assert budget.result_.peak_working_set_bytes < ref.result_.peak_working_set_bytes
    assert budget.result_.peak_working_set_bytes <= 25_000 + 16 * ref.featurizer_.dim_
    assert all(np.array_equal(a, b) for a, b in zip(threads.predict(train), ref.predict(train)))


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(checkpoint=3), "checkpoint"),
        (dict(resume=True), "resume"),
        (dict(checkpoint_every=0), "checkpoint_every"),
        (dict(memory_limit=-5), "memory_limit"),
        (dict(executor="nope"), "executor"),
        (dict(scheduler="tcp://127.0.0.1:1"), "scheduler"),
    ],
)
def test_bad_engine_options(data, kwargs, field):
    with pytest.raises(InputError) as err:
        DependencyParser(TEMPLATES, solver=CuttingPlane(**kwargs)).fit(data[0][:5])
    assert err.value.field == field


def test_engine_options_roundtrip_through_model_files(tmp_path, data):
    est = DependencyParser(
        TEMPLATES, C=1.0, solver=CuttingPlane(checkpoint=tmp_path / "c.npz", checkpoint_every=3, memory_limit=10**7)
    ).fit(data[0][:10])
    back = DependencyParser.load(est.save(tmp_path / "m.npz"))
    assert back.solver.checkpoint == str(tmp_path / "c.npz") and back.solver.checkpoint_every == 3
    assert back.solver.memory_limit == 10**7 and back.solver.scheduler is None
