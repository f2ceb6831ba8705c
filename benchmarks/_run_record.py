"""What a benchmark page says of its run, and writing it: the command, the date, the machine,
the load average before and after, then the page and its JSON record."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

__all__ = ["load_average", "run_meta", "write_page"]


def load_average() -> list:
    """The 1, 5 and 15 minute load averages, rounded (a shared machine: noisy seconds)."""
    return [round(v, 2) for v in os.getloadavg()]


def run_meta(prog: str, argv, load_before: list, **extra) -> dict:
    """The run's record: ``command`` (``prog`` and the arguments given, or the process's),
    ``date``, ``machine``, ``load_before``, ``load_after`` (now) and ``extra``."""
    return dict(
        command=" ".join([prog, *(sys.argv[1:] if argv is None else argv)]),
        date=time.strftime("%Y-%m-%d"),
        machine=f"{platform.machine()}, {platform.system()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        **extra,
        load_before=load_before,
        load_after=load_average(),
    )


def write_page(page: str, out, json_path, meta: dict, records) -> None:
    """Write the markdown ``page`` to ``out`` and ``{"meta", "records"}`` to ``json_path``, and
    print the page."""
    Path(out).write_text(page + "\n")
    Path(json_path).write_text(json.dumps(dict(meta=meta, records=records), indent=1) + "\n")
    print(page)
