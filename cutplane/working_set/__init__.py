"""The working set (bundle) of cuts and its parts.

- :mod:`~cutplane.working_set.working_set`: :class:`WorkingSet`, the cuts with their Gram
  matrix (per coordinate group) kept incrementally;
- :mod:`~cutplane.working_set.sparse_rows`: the storage of sparse slopes (quantised rows,
  Gram rows, ``A alpha``), with its compiled loops in ``_ws_kernels``;
- :mod:`~cutplane.working_set.limited_memory`: duals, idle counts, pruning and aggregation
  (limited-memory BMRM), the operations :class:`WorkingSet` inherits;
- :mod:`~cutplane.working_set.memory_budget`: bytes per cut and making room under a memory
  limit;
- :mod:`~cutplane.working_set.state`: the working set as plain arrays and back (checkpoints,
  compaction).
"""

from .memory_budget import bytes_after_add, fit_memory, slope_bytes
from .state import working_set_from_state, working_set_state
from .working_set import WorkingSet

__all__ = ["WorkingSet", "bytes_after_add", "fit_memory", "slope_bytes", "working_set_from_state", "working_set_state"]
