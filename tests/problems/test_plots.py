"""The run figures are written as real PNG files with the expected content."""

from types import SimpleNamespace

import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems.plots import plot_bounds, plot_template_weights

pytest.importorskip("matplotlib")


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_template_weights_png(tmp_path):
    out = plot_template_weights({"U00": 0.5, "U01": 0.0, "B": 0.25, "U02": 1e-9}, tmp_path / "w.png")
    w, h = _png_size(out)
    assert w > 100 and h > 100


def test_bounds_png(tmp_path):
    # the two arrays of a cutplane.Result.history that the figure reads
    hist = SimpleNamespace(best_upper=np.linspace(5, 1, 6), lower=np.array([-np.inf, 0, 0.5, 0.8, 0.95, 0.99]))
    out = plot_bounds(hist, tmp_path / "b.png", scale=2.0)
    assert _png_size(out)[0] > 100


def test_empty_inputs_rejected(tmp_path):
    with pytest.raises(InputError):
        plot_template_weights({}, tmp_path / "x.png")
