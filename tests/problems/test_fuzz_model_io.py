"""Fuzzing the model loader and the estimators' ``load``: a damaged model file either loads
(and then predicts or refuses cleanly) or raises the package's own error, nothing else.

Four kinds of damage, each on real model files of LinearSVM and SequenceTagger:

- bytes: truncation, byte flips, inserted bytes, random bytes (caught by the zip layer);
- members: the ``.npy`` bytes of one archive member edited and the archive rebuilt with valid
  CRCs (hostile ``.npy`` headers, data that disagrees with the header);
- metadata: JSON values replaced by random JSON, keys dropped, huge or nested values;
- arrays: one array replaced by another shape / dtype / NaN, with metadata kept consistent.
"""

import io
import json
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cutplane.exceptions import CutplaneError, ModelFormatError
from problems.linear.svm import LinearSVM
from problems.model_io import load_model, save_model
from problems.sequence.tagger import SequenceTagger
from problems.solvers import CuttingPlane


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory(prefix="cutplane_fuzz_model_") as d:
        yield Path(d)


@pytest.fixture(scope="module")
def models(scratch):
    """Valid model files (bytes), the estimator class and a predict input for each."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    svm = LinearSVM(C=1.0, solver=CuttingPlane(eps=1e-2)).fit(X, y)
    svm.save(scratch / "svm.npz")
    sents = [[("the", "DT"), ("dog", "NN")], [("a", "DT"), ("cat", "NN"), ("runs", "VB")]] * 3
    labels = [["B", "I"], ["B", "I", "O"]] * 3
    tagger = SequenceTagger("U00:%x[0,0]\nU01:%x[0,1]\nB\n", C=1.0, solver=CuttingPlane(eps=0.5, max_iter=20)).fit(
        sents, labels
    )
    tagger.save(scratch / "tagger.npz")
    return {
        "svm": ((scratch / "svm.npz").read_bytes(), LinearSVM, X[:3]),
        "tagger": ((scratch / "tagger.npz").read_bytes(), SequenceTagger, sents[:2]),
    }


def _members(blob: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def _zip(members: dict) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def _npz(entries: dict) -> bytes:
    out = io.BytesIO()
    np.savez(out, **entries)
    return out.getvalue()


def _entries(blob: bytes) -> dict:
    with np.load(io.BytesIO(blob), allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
    max_leaves=8,
)
TOKENS = [
    b"\x00",
    b"\xff",
    b"'",
    b"{",
    b"}",
    b"(",
    b")",
    b",",
    b"9" * 30,
    b"-1",
    b"'descr': '|O', ",
    b"'shape': (99999999999, 99999999999), ",
    b"'fortran_order': True, ",
    b"<f4",
    b"<U9",
    b"\n",
]


@st.composite
def byte_damage(draw, blob):
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "random"]))
    data = bytearray(blob)
    if kind == "random":
        return draw(st.binary(max_size=300))
    pos = draw(st.integers(0, len(data) - 1))
    if kind == "truncate":
        return bytes(data[:pos])
    if kind == "flip":
        data[pos] ^= draw(st.integers(1, 255))
    else:
        data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
    return bytes(data)


@st.composite
def member_damage(draw, blob):
    members = _members(blob)
    name = draw(st.sampled_from(sorted(members)))
    data = bytearray(members[name])
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, min(len(data), 140)))  # mostly the .npy header
        op = draw(st.sampled_from(["flip", "insert", "truncate", "delete"]))
        if op == "flip" and pos < len(data):
            data[pos] ^= draw(st.integers(1, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from(TOKENS))
        elif op == "truncate":
            del data[draw(st.integers(0, len(data))) :]
        else:
            del data[pos : pos + draw(st.integers(1, 8))]
    members[name] = bytes(data)
    if draw(st.booleans()):
        members[draw(st.sampled_from(["extra.npy", "extra.txt", "dir/x.npy"]))] = draw(st.binary(max_size=64))
    return _zip(members)


@st.composite
def meta_damage(draw, blob):
    entries = _entries(blob)
    meta = json.loads(str(entries["__meta__"]))
    keys = sorted(meta)
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(keys))
        op = draw(st.sampled_from(["replace", "drop", "inner"]))
        if op == "drop":
            meta.pop(key, None)
        elif op == "replace":
            meta[key] = draw(JSON)
        elif isinstance(meta.get(key), dict) and meta[key]:  # replace one value inside (params, arrays, ...)
            inner = draw(st.sampled_from(sorted(meta[key])))
            meta[key][inner] = draw(JSON)
    text = json.dumps(meta)
    if draw(st.integers(0, 9)) == 0:
        text = draw(st.sampled_from(["[" * 100000, "NaN", '{"format": NaN}', text[: len(text) // 2]]))
    entries["__meta__"] = np.array(text)
    return _npz(entries)


@st.composite
def array_damage(draw, blob):
    entries = _entries(blob)
    meta = json.loads(str(entries["__meta__"]))
    name = draw(st.sampled_from(sorted(k for k in entries if k != "__meta__")))
    old = entries[name]
    kind = draw(st.sampled_from(["nan", "shape", "dtype", "empty", "strings"]))
    if kind == "nan" and old.dtype.kind == "f" and old.size:
        new = old.copy()
        new.flat[draw(st.integers(0, old.size - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    elif kind == "shape":
        new = np.zeros(draw(st.lists(st.integers(0, 4), max_size=3)), dtype=old.dtype)
    elif kind == "dtype":
        dtype = draw(st.sampled_from([np.float32, np.int8, np.int64, np.bool_, np.complex128, "<U3"]))
        try:
            new = old.astype(dtype)
        except ValueError:  # strings to numbers
            new = np.zeros(old.shape, dtype=dtype)
    elif kind == "empty":
        new = old[:0] if old.ndim else old.reshape(1)[:0]
    else:
        new = np.array(draw(st.lists(st.text(max_size=3), max_size=4)), dtype=str)
    entries[name] = new
    if draw(st.booleans()):  # keep the declaration consistent so the deeper checks are reached
        meta["arrays"][name] = {"shape": list(new.shape), "dtype": new.dtype.str}
    entries["__meta__"] = np.array(json.dumps(meta))
    return _npz(entries)


DAMAGE = {"bytes": byte_damage, "members": member_damage, "meta": meta_damage, "arrays": array_damage}


def _load_or_own_error(path, cls, X):
    try:
        load_model(path)
    except CutplaneError as exc:
        assert isinstance(exc, ModelFormatError) and str(path) in str(exc), exc
    try:
        est = cls.load(path)
    except CutplaneError as exc:
        assert str(path) in str(exc), exc
        return
    try:  # a model that loads must predict or refuse with the package's error
        est.predict(X)
    except CutplaneError:
        pass


def _fuzz(models, scratch, model, damage, max_examples):
    blob, cls, X = models[model]

    @settings(max_examples=max_examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=DAMAGE[damage](blob))
    def run(data):
        path = scratch / f"{model}_{damage}.npz"
        path.write_bytes(data)
        _load_or_own_error(path, cls, X)

    run()


def test_valid_models_load_and_predict(models, scratch):
    for model, (blob, cls, X) in models.items():
        path = scratch / f"{model}.copy.npz"
        path.write_bytes(blob)
        est = cls.load(path)
        assert len(est.predict(X)) == len(X)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("model", ["svm", "tagger"])
def test_fuzz_model_short(models, scratch, model, damage):
    _fuzz(models, scratch, model, damage, 100)


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("model", ["svm", "tagger"])
def test_fuzz_model_long(models, scratch, model, damage):
    _fuzz(models, scratch, model, damage, 10_000)


def test_fuzz_finds_no_pickle_path(scratch):
    """An object array smuggled in with a consistent declaration is still refused (never unpickled)."""
    path = scratch / "obj.npz"
    save_model(path, {"coef": np.zeros(2)}, {"estimator": "Toy"})
    entries = _entries(path.read_bytes())
    entries["coef"] = np.array([{"a": 1}, None], dtype=object)
    path.write_bytes(_npz(entries))
    with pytest.raises(ModelFormatError, match=str(path)):
        load_model(path)
