"""Model files: round trip, and every kind of damaged file refused with ModelFormatError."""

import json

import numpy as np
import pytest

from cutplane.exceptions import InputError, ModelFormatError
from problems.model_io import FORMAT_VERSION, load_model, save_model
from problems.solvers import CuttingPlane

ARRAYS = {
    "coef": np.arange(6.0).reshape(2, 3),
    "classes": np.array(["a", "b"]),
    "mask": np.array([True, False]),
    "count": np.array(7, dtype=np.int32),
}
META = {"estimator": "Toy", "params": {"C": 2.5, "method": "bmrm", "max_cuts": None}}


def _save(tmp_path, name="m.npz"):
    return save_model(tmp_path / name, ARRAYS, META)


def _rewrite(path, out, *, meta_update=None, drop=(), add=None, replace=None, raw_meta=None):
    """Copy a valid model file with surgical damage."""
    with np.load(path, allow_pickle=False) as data:
        entries = {k: data[k] for k in data.files}
    meta = json.loads(str(entries["__meta__"]))
    meta.update(meta_update or {})
    entries["__meta__"] = np.array(json.dumps(meta) if raw_meta is None else raw_meta)
    for k in drop:
        entries.pop(k)
    entries.update(add or {})
    entries.update(replace or {})
    np.savez(out, **entries)
    return out


def test_round_trip(tmp_path):
    path = _save(tmp_path)
    arrays, meta = load_model(path, estimator="Toy")
    assert set(arrays) == set(ARRAYS)
    for k, v in ARRAYS.items():
        np.testing.assert_array_equal(arrays[k], v)
        assert arrays[k].dtype == v.dtype
    assert meta["params"] == META["params"]
    assert meta["format"] == "cutplane-model" and meta["format_version"] == FORMAT_VERSION
    assert meta["arrays"]["coef"] == {"shape": [2, 3], "dtype": "<f8"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_a_failed_save_keeps_the_old_model(tmp_path, monkeypatch):
    path = _save(tmp_path)
    before = path.read_bytes()

    def disk_full(f, **arrays):
        f.write(b"PK half an archive")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", disk_full)
    with pytest.raises(OSError):
        save_model(path, {"coef": np.zeros((2, 3))}, {"estimator": "Toy"})
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_truncated_and_corrupted_files(tmp_path):
    blob = _save(tmp_path).read_bytes()
    for cut in (0, 10, len(blob) // 2, len(blob) - 5):
        p = tmp_path / f"t{cut}.npz"
        p.write_bytes(blob[:cut])
        with pytest.raises(ModelFormatError):
            load_model(p)
    flipped = bytearray(blob)
    mid = len(flipped) // 3
    flipped[mid : mid + 40] = bytes(b ^ 0xFF for b in flipped[mid : mid + 40])
    p = tmp_path / "flipped.npz"
    p.write_bytes(bytes(flipped))
    with pytest.raises(ModelFormatError):
        load_model(p)
    p = tmp_path / "text.npz"
    p.write_text("hello")
    with pytest.raises(ModelFormatError):
        load_model(p)
    with pytest.raises(ModelFormatError, match="not found"):
        load_model(tmp_path / "missing.npz")


@pytest.mark.parametrize(
    "damage, match",
    [
        (dict(meta_update={"format_version": FORMAT_VERSION + 1}), "format_version"),
        (dict(meta_update={"format_version": "1"}), "format_version"),
        (dict(meta_update={"format": "other"}), "unknown format"),
        (dict(raw_meta="{not json"), "JSON"),
        (dict(raw_meta="[1, 2]"), "JSON object"),
        (dict(drop=("coef",)), "declared"),
        (dict(add={"extra": np.zeros(2)}), "declared"),
        (dict(replace={"coef": np.zeros((3, 2))}), "shape"),
        (dict(replace={"coef": np.zeros((2, 3), dtype=np.float32)}), "dtype"),
        (dict(drop=("__meta__",)), "no metadata"),
        (dict(replace={"__meta__": np.zeros(3)}), "JSON string"),
    ],
)
def test_damaged_metadata_refused(tmp_path, damage, match):
    path = _save(tmp_path)
    if "__meta__" in damage.get("drop", ()):
        with np.load(path) as data:
            entries = {k: data[k] for k in data.files if k != "__meta__"}
        bad = tmp_path / "bad.npz"
        np.savez(bad, **entries)
    elif "__meta__" in damage.get("replace", {}):
        with np.load(path) as data:
            entries = {k: data[k] for k in data.files}
        entries.update(damage["replace"])
        bad = tmp_path / "bad.npz"
        np.savez(bad, **entries)
    else:
        bad = _rewrite(path, tmp_path / "bad.npz", **damage)
    with pytest.raises(ModelFormatError, match=match):
        load_model(bad)


def test_pickled_arrays_are_never_loaded(tmp_path):
    p = tmp_path / "pickled.npz"
    np.savez(p, coef=np.array([{"evil": 1}], dtype=object), __meta__=np.array("{}"))
    with pytest.raises(ModelFormatError):
        load_model(p)


def test_wrong_estimator_refused(tmp_path):
    with pytest.raises(ModelFormatError, match="Toy model, expected LinearSVM"):
        load_model(_save(tmp_path), estimator="LinearSVM")


def test_save_refuses_bad_arguments(tmp_path):
    with pytest.raises(InputError, match="estimator"):
        save_model(tmp_path / "a.npz", ARRAYS, {"params": {}})
    with pytest.raises(InputError, match="reserved"):
        save_model(tmp_path / "a.npz", ARRAYS, {**META, "format_version": 3})
    with pytest.raises(InputError, match="pickle"):
        save_model(tmp_path / "a.npz", {"x": np.array([object()])}, META)
    with pytest.raises(InputError, match="JSON"):
        save_model(tmp_path / "a.npz", ARRAYS, {**META, "bad": object()})
    with pytest.raises(InputError, match="JSON"):
        save_model(tmp_path / "a.npz", ARRAYS, {**META, "nan": float("nan")})
    with pytest.raises(InputError, match="identifier"):
        save_model(tmp_path / "a.npz", {"__meta__": np.zeros(1)}, META)


# -- hostile files: each refused with one ModelFormatError naming the file --------------------------
def _meta_of(path):
    with np.load(path, allow_pickle=False) as data:
        return json.loads(str(data["__meta__"]))


def test_directory_and_plain_npy_refused(tmp_path):
    with pytest.raises(ModelFormatError, match="directory"):
        load_model(tmp_path)
    p = tmp_path / "single.npy"
    np.save(p, np.zeros(3))
    with pytest.raises(ModelFormatError, match="single .npy") as info:
        load_model(p)
    assert info.value.path == str(p)


def test_non_finite_arrays_refused_unless_allowed(tmp_path):
    arrays = {**ARRAYS, "coef": np.array([[1.0, np.nan, 0.0], [0.0, 0.0, np.inf]])}
    path = save_model(tmp_path / "nan.npz", arrays, META)
    with pytest.raises(ModelFormatError, match="NaN or infinite") as info:
        load_model(path)
    assert info.value.field == "coef"
    got = load_model(path, allow_nonfinite=["coef"]).arrays["coef"]
    assert np.isnan(got[0, 1]) and np.isinf(got[1, 2])


@pytest.mark.parametrize(
    "text, match",
    [
        ('{"format": NaN}', "JSON"),
        ("[" * 100000 + "]" * 100000, "JSON"),
    ],
)
def test_hostile_json_refused(tmp_path, text, match):
    bad = _rewrite(_save(tmp_path), tmp_path / "bad.npz", raw_meta=text)
    with pytest.raises(ModelFormatError, match=match):
        load_model(bad)


@pytest.mark.parametrize(
    "spec",
    [
        {"shape": [2, -3], "dtype": "<f8"},
        {"shape": "2x3", "dtype": "<f8"},
        {"shape": [2, 3], "dtype": "|O"},
        {"shape": [2, 3], "dtype": "nonsense"},
        {"shape": [2, 3], "dtype": "<V8"},
        [2, 3],
    ],
)
def test_bad_declarations_refused(tmp_path, spec):
    path = _save(tmp_path)
    arrays = dict(_meta_of(path)["arrays"], coef=spec)
    bad = _rewrite(path, tmp_path / "bad.npz", meta_update={"arrays": arrays})
    with pytest.raises(ModelFormatError) as info:
        load_model(bad)
    assert info.value.field == "coef" and str(bad) in str(info.value)


def test_stored_size_checked_before_reading(tmp_path):
    """A member whose declared shape is small but whose stored data is huge (or the reverse)."""
    path = _save(tmp_path)
    big = _rewrite(path, tmp_path / "big.npz", replace={"coef": np.zeros((400, 300))})
    with pytest.raises(ModelFormatError, match="does not match the declared shape"):
        load_model(big)


def test_foreign_and_unsupported_members_refused(tmp_path):
    import zipfile

    path = _save(tmp_path)
    for name, method in (
        ("notes.txt", zipfile.ZIP_DEFLATED),
        ("sub/x.npy", zipfile.ZIP_DEFLATED),
        ("coef2.npy", zipfile.ZIP_BZIP2),
    ):
        bad = tmp_path / "bad.npz"
        bad.write_bytes(path.read_bytes())
        with zipfile.ZipFile(bad, "a", compression=method) as zf:
            zf.writestr(name, b"x" * 10)
        with pytest.raises(ModelFormatError, match="member") as info:
            load_model(bad)
        assert name in str(info.value)


def test_schema_of_a_registered_estimator(tmp_path):
    from problems.model_io import ModelSchema, register_schema

    register_schema(
        "Toy2",
        ModelSchema(
            arrays={"coef": ("f", 2), "classes": ("U", 1)},
            meta={"params": (dict,), "n_iter": (int,), "gap": (float, type(None))},
        ),
    )
    meta = {"estimator": "Toy2", "params": {"C": 1.0}, "n_iter": 3, "gap": None}
    ok = save_model(tmp_path / "ok.npz", ARRAYS, meta)
    assert load_model(ok).meta["n_iter"] == 3
    cases = [
        ({k: v for k, v in ARRAYS.items() if k != "classes"}, meta, "'classes' is missing"),
        ({**ARRAYS, "coef": np.arange(3.0)}, meta, "dimension"),
        ({**ARRAYS, "coef": np.ones((2, 3), dtype=int)}, meta, "kind"),
        (ARRAYS, {**meta, "n_iter": "3"}, "expected int"),
        (ARRAYS, {**meta, "n_iter": True}, "expected int"),
        (ARRAYS, {**meta, "gap": "x"}, "float or null"),
        (ARRAYS, {k: v for k, v in meta.items() if k != "params"}, "'params' is missing"),
    ]
    for arrays, m, match in cases:
        bad = save_model(tmp_path / "bad.npz", arrays, m)
        with pytest.raises(ModelFormatError, match=match):
            load_model(bad)
    assert load_model(save_model(tmp_path / "g.npz", ARRAYS, {**meta, "gap": 2})).meta["gap"] == 2


def test_package_estimator_schemas_check_hyper_parameter_names(tmp_path):
    from problems.linear.svm import LinearSVM

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    est = LinearSVM(C=1.0, solver=CuttingPlane(eps=1e-2)).fit(X, (X[:, 0] > 0).astype(int))
    path = est.save(tmp_path / "svm.npz")
    params = dict(_meta_of(path)["params"], not_a_param=1)
    bad = _rewrite(path, tmp_path / "bad.npz", meta_update={"params": params})
    with pytest.raises(ModelFormatError, match="unknown hyper-parameters.*not_a_param"):
        LinearSVM.load(bad)
    nan = _rewrite(path, tmp_path / "nan.npz", replace={"coef": np.full_like(est.coef_, np.nan)})
    with pytest.raises(ModelFormatError, match="NaN"):
        LinearSVM.load(nan)


def test_invalid_code_points_refused(tmp_path):
    """numpy loads a '<U' array holding code points above U+10FFFF; using it would crash later."""
    bad_labels = np.frombuffer(np.array([0x110000, 65], dtype="<u4").tobytes(), dtype="<U2")
    bad = _rewrite(
        _save(tmp_path),
        tmp_path / "bad.npz",
        add={"labels": bad_labels},
        meta_update={"arrays": {**_meta_of(_save(tmp_path))["arrays"], "labels": {"shape": [1], "dtype": "<U2"}}},
    )
    with pytest.raises(ModelFormatError, match="code points") as info:
        load_model(bad)
    assert info.value.field == "labels"


@pytest.fixture(scope="module")
def tagger_file(tmp_path_factory):
    from problems.sequence.tagger import SequenceTagger

    sents = [[("the", "DT"), ("dog", "NN")], [("a", "DT"), ("cat", "NN"), ("runs", "VB")]] * 3
    labels = [["B", "I"], ["B", "I", "O"]] * 3
    est = SequenceTagger("U00:%x[0,0]\nU01:%x[0,1]\nB\n", C=1.0, solver=CuttingPlane(eps=0.5, max_iter=20)).fit(
        sents, labels
    )
    return est.save(tmp_path_factory.mktemp("tagger") / "tagger.npz"), sents


@pytest.mark.parametrize(
    "meta_update, replace, field",
    [
        ({"templates": "abc"}, None, "templates"),
        ({"templates": "U00:%x[0,0]\nB\n"}, None, "group_offsets"),  # one template fewer than the groups
        ({"active_templates": ["nope"]}, None, "active_templates"),
        ({"template_weights": {"U00": "x"}}, None, "template_weights"),
        ({"params": {"min_count": "x"}}, None, "params"),
        ({"params": {"bogus": 1}}, None, "params"),
        ({"n_iter": 1.5}, None, "n_iter"),
        (None, {"labels": np.array(["B", "B", "O"])}, "labels"),
        (None, {"feature_groups": "reverse"}, "feature_groups"),
    ],
)
def test_sequence_tagger_files_checked_for_consistency(tmp_path, tagger_file, meta_update, replace, field):
    from problems.sequence.tagger import SequenceTagger

    path, sents = tagger_file
    meta = _meta_of(path)
    update = dict(meta_update or {})
    if "params" in update:
        update["params"] = {**meta["params"], **update["params"]}
    replace = dict(replace or {})
    if replace.get("feature_groups") == "reverse":
        with np.load(path) as data:
            replace["feature_groups"] = data["feature_groups"][::-1].copy()
    bad = _rewrite(path, tmp_path / "bad.npz", meta_update=update, replace=replace)
    with pytest.raises(ModelFormatError) as info:
        SequenceTagger.load(bad)
    assert info.value.field == field and str(bad) in str(info.value)
    assert len(SequenceTagger.load(path).predict(sents[:2])) == 2  # the undamaged file still loads
