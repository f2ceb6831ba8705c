"""Model files: round trip, and every kind of damaged file refused with ModelFormatError."""
import json

import numpy as np
import pytest

from cutplane.exceptions import InputError, ModelFormatError
from problems.model_io import FORMAT_VERSION, load_model, save_model

ARRAYS = {"coef": np.arange(6.0).reshape(2, 3), "classes": np.array(["a", "b"]),
          "mask": np.array([True, False]), "count": np.array(7, dtype=np.int32)}
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
    assert not (tmp_path / "m.npz.tmp").exists()


def test_truncated_and_corrupted_files(tmp_path):
    blob = _save(tmp_path).read_bytes()
    for cut in (0, 10, len(blob) // 2, len(blob) - 5):
        p = tmp_path / f"t{cut}.npz"
        p.write_bytes(blob[:cut])
        with pytest.raises(ModelFormatError):
            load_model(p)
    flipped = bytearray(blob)
    mid = len(flipped) // 3
    flipped[mid:mid + 40] = bytes(b ^ 0xFF for b in flipped[mid:mid + 40])
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


@pytest.mark.parametrize("damage, match", [
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
])
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
