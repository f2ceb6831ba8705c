import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True, derandomize=True
)
settings.load_profile("ci" if os.environ.get("CI") else "default")

# The library finds the datasets by CUTPLANE_DATA or ~/cutplane_data (problems.datasets); the
# project's copy, ../shared/data beside the checkout (the repository root, not the working
# directory), is the suite's own fallback: named here for the session, and inherited by the
# commands the tests run.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if not os.environ.get("CUTPLANE_DATA") and SHARED_DATA.is_dir():
    os.environ["CUTPLANE_DATA"] = str(SHARED_DATA)

DATA_ABSENT = "datasets absent: set CUTPLANE_DATA (or provide ~/cutplane_data, or ../shared/data beside the checkout)"


def pytest_runtest_setup(item):
    """A test marked ``data`` skips, saying why, when the datasets are absent (before its fixtures
    run); where they are present, as under CI, it runs (``-m "not data"`` deselects them)."""
    if item.get_closest_marker("data") is not None:
        from problems.datasets import data_home

        if data_home() is None:
            pytest.skip(DATA_ABSENT)


@pytest.fixture
def data_dir():
    """The datasets folder; skips the test with the reason when it is absent."""
    from problems.datasets import data_home

    home = data_home()
    if home is None:
        pytest.skip(DATA_ABSENT)
    return home


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
