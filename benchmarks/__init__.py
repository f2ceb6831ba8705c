"""Paired timing scripts and the papers' reproductions, run as ``python -m benchmarks.<name>``."""

from benchmarks._data import use_shared_data

use_shared_data()  # the project's ../shared/data when CUTPLANE_DATA is unset (benchmarks/_data.py)
