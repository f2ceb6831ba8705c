"""Linear SVMs: BMRM and LS-BMRM (ours) against liblinear (LinearSVC) and LIBOCAS (svmocas).

One run times, on the same data and the same objective
``F(w) = 1/2 ||w||^2 + C_lib * sum_i loss_i(w)`` (liblinear's and LIBOCAS's C; the engine's
``C = C_lib * n`` minimises ``F / (C_lib n)``; binary hinge without bias, or Crammer-Singer):

- ``bmrm``, ``ls-bmrm``: :func:`cutplane.minimize` with the hinge oracles of ``oracles.linear``;
  the trace is the best objective after each iteration (engine callback);
- ``linearsvc``: ``LinearSVC(loss="hinge", fit_intercept=False, dual=True)`` (Crammer-Singer for
  the multiclass set), rerun from scratch at tol 1e-1 ... 1e-6; its time to a target is that of
  the fastest rerun that reached it (generous to liblinear);
- ``svmocas -m 0`` (BMRM) and ``-m 1`` (OCAS), ``msvmocas`` for multiclass, when Debian's
  ``libocas-tools`` is installed (skipped with a message otherwise); the per-iteration lines
  (``tim=``, ``Q_P=``) give the trace; the data go through an SVMlight file (load time excluded).

``F*`` is the smallest final objective of all methods; a method's *time to target* is the first
time its objective is within ``--rel`` (1e-4) of ``F*``, and *iterations to target* the number
of oracle calls (cutting planes) until then. LS-BMRM, LinearSVC and OCAS run ``--repeat`` times
(min / median / max of the time to target), the plain cutting-plane references ``--ref-repeat``
times. Datasets: dense synthetic (ANCHORS.md recipe, ``--dense-n`` x
``--dense-d``), sparse synthetic (``--sparse-n`` x ``--sparse-d`` at ``--sparse-density``), the OCR
letters "e" vs rest and 26-class (``problems.io.read_ocr_letters``). BLAS runs on one thread
(``OPENBLAS_NUM_THREADS=1``, as liblinear and svmocas -p 1): on a shared, loaded machine
multi-threaded BLAS is 10-50x slower on these matrix-vector products.

The table goes to stdout and, with the command line and the load average, to ``--out``
(default ``docs/results/linear_svm.md``).

Run: ``python -m benchmarks.linear_svm`` (full), ``--quick`` (small sizes), ``--sets dense ocr-e``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import NamedTuple  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# BMRM / OCAS iteration ratios of LIBOCAS itself at 1e-4 relative (ANCHORS.md, issue 5)
LIBOCAS_RATIO = {
    ("dense", 1.0): 4.8,
    ("dense", 0.01): 2.5,
    ("sparse", 0.01): 1.2,
    ("sparse", 1.0): 1.3,
    ("ocr-e", 0.01): 5.2,
    ("ocr-e", 1.0): 17.6,
    ("ocr-26", 0.01): 6.5,
}


class Dataset(NamedTuple):
    name: str
    X: object  # ndarray or CSR, (n, d)
    y: np.ndarray  # {-1, +1} or class indices
    multiclass: bool


class Run(NamedTuple):
    """One run: final objective, total seconds, trace of (seconds, objective, iterations)."""

    name: str
    objective: float
    time_s: float
    trace: list
    n_iter: int
    note: str = ""


# ---------------------------------------------------------------------------- data
def dense_set(n, d, seed=777):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, d)) / np.sqrt(d), 7)  # 7 decimals: a compact SVMlight file
    y = np.sign(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n))
    y[y == 0] = 1.0
    return Dataset("dense", X, y, False)


def sparse_set(n, d, density, seed=778):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float64)
    X.data = np.round(X.data, 6)
    X.eliminate_zeros()
    y = np.sign(X @ rng.standard_normal(d) + 0.05 * rng.standard_normal(n))
    y[y == 0] = 1.0
    return Dataset("sparse", X, y, False)


def ocr_sets():
    from problems.datasets import dataset_path
    from problems.io import read_ocr_letters

    data = read_ocr_letters(dataset_path("ocr-letters", "letter.data.gz"))
    X = np.asarray(data.pixels, dtype=np.float64)
    e = ord("e") - ord("a")
    y_e = np.where(data.labels == e, 1.0, -1.0)
    return Dataset("ocr-e", X, y_e, False), Dataset("ocr-26", X, data.labels.astype(np.int64), True)


def objective(w, ds, C_lib):
    from oracles.linear import BinaryHinge, MulticlassHinge

    oracle = MulticlassHinge(ds.X, ds.y, n_classes=26) if ds.multiclass else BinaryHinge(ds.X, ds.y)
    return 0.5 * float(w @ w) + C_lib * oracle.n_samples * oracle(w).value


# ---------------------------------------------------------------------------- methods
def run_engine(ds, C_lib, args, method):
    from cutplane.regularizers import L2
    from oracles.linear import BinaryHinge, MulticlassHinge

    oracle = MulticlassHinge(ds.X, ds.y, n_classes=26) if ds.multiclass else BinaryHinge(ds.X, ds.y)
    C = C_lib * oracle.n_samples
    trace = []
    from cutplane.engine import minimize_with_working_set as minimize  # imported here, not in the timed fit

    t0 = time.perf_counter()

    def callback(info):
        trace.append((time.perf_counter() - t0, C * info.best_upper, info.iteration))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # eps is absolute on the engine's scale F / C, where F(0) / C = 1 and F* / C is 0.1-1 on
        # these sets: eps_rel / 10 keeps the certified gap below eps_rel relative
        res, ws = minimize(
            oracle,
            L2(),
            1.0 / C,
            method=method,
            eps=args.eps_rel * 0.1,
            max_iter=args.max_iter,
            time_limit=args.time_limit,
            callback=callback,
        )
    elapsed = time.perf_counter() - t0
    trace.append((elapsed, C * res.objective, res.n_iter))  # no callback on the converged iteration
    note = (
        f"{res.status}, gap {res.gap / max(res.objective, 1e-300):.1e} rel; oracle {res.oracle_time_s:.2f}s "
        f"reduced {res.solver_time_s:.2f}s ({res.backend}) line search {res.step_time_s:.2f}s; "
        f"max cuts {int(res.history.n_cuts.max())}{'; cuts in float32' if ws.single_precision else ''}"
    )
    return Run(method.upper(), C * res.objective, elapsed, trace, res.n_iter, note)


def run_linearsvc(ds, C_lib, args):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    trace, clf = [], None
    for k in range(1, 7):
        kw = dict(multi_class="crammer_singer") if ds.multiclass else dict(loss="hinge", dual=True)
        clf = LinearSVC(C=C_lib, fit_intercept=False, tol=10.0**-k, max_iter=args.liblinear_max_iter, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.perf_counter()
            clf.fit(ds.X, ds.y)
            elapsed = time.perf_counter() - t0
        trace.append((elapsed, objective(clf.coef_.ravel(), ds, C_lib), int(np.max(clf.n_iter_))))
    return Run("LinearSVC", trace[-1][1], trace[-1][0], trace, trace[-1][2], "epochs at tol 1e-6; reruns per tol")


_LINE = re.compile(r"^\s*(\d+):\s*tim=([-+\d.eE]+),\s*Q_P=([-+\d.eE]+)")


def run_svmocas(ds, C_lib, args, mode, path):
    exe = "msvmocas" if ds.multiclass else "svmocas"
    cmd = [exe, "-c", repr(C_lib), "-m", str(mode), "-r", repr(args.eps_rel), "-v", "1"]
    if not ds.multiclass:
        cmd[1:1] = ["-b", "0"]
    if args.time_limit:
        cmd += ["-t", repr(args.time_limit)]
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(cmd + [str(path), os.path.join(tmp, "model")], capture_output=True, text=True, check=False)
    trace, best = [], np.inf
    for line in out.stdout.splitlines():
        m = _LINE.match(line)
        if m:
            best = min(best, float(m.group(3)))
            trace.append((float(m.group(2)), best, int(m.group(1))))
    if not trace:
        raise RuntimeError(f"{exe} printed no iteration lines (exit {out.returncode}): {out.stderr[-300:]}")
    ocas = re.search(r"ocas_time\s*:\s*([\d.eE+-]+)", out.stdout)
    total = float(ocas.group(1)) if ocas else trace[-1][0]
    return Run(f"{exe} -m {mode}", best, total, trace, trace[-1][2], "time excludes file loading")


def run_fresh(spec, C_lib, args, method):
    """One run in a new Python process (``--fresh-process``): imports happen before the clock
    starts, everything the fit does (numba kernels loaded or compiled, solver back-ends probed)
    is timed. The dataset is rebuilt in the child from ``spec`` (same seeds, same arrays)."""
    payload = {
        "spec": spec,
        "C_lib": C_lib,
        "method": method,
        "eps_rel": args.eps_rel,
        "max_iter": args.max_iter,
        "time_limit": args.time_limit,
        "liblinear_max_iter": args.liblinear_max_iter,
    }
    env = dict(os.environ)
    if args.cold_numba:  # an empty numba cache: every kernel the fit uses is compiled in the timed fit
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba-cold-")
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.linear_svm", "--child", json.dumps(payload)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"child run {method} failed (exit {out.returncode}): {out.stderr[-800:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return Run(r["name"], r["objective"], r["time_s"], [tuple(t) for t in r["trace"]], r["n_iter"], r["note"])


def build_set(spec):
    """The dataset of a ``spec`` dict (``kind`` and sizes), as the parent builds it."""
    kind = spec["kind"]
    if kind == "dense":
        return dense_set(spec["n"], spec["d"])
    if kind == "sparse":
        return sparse_set(spec["n"], spec["d"], spec["density"])
    ocr = ocr_sets()
    return ocr[0] if kind == "ocr-e" else ocr[1]


def child_main(payload_json):
    """``--child``: build the set, run one method, print its Run as JSON on the last line."""
    payload = json.loads(payload_json)
    args = argparse.Namespace(**{k: payload[k] for k in ("eps_rel", "max_iter", "time_limit", "liblinear_max_iter")})
    ds = build_set(payload["spec"])
    method = payload["method"]
    if method in ("bmrm", "ls-bmrm"):
        import cutplane  # noqa: F401  (imported before the clock, as a user's script would)

        run = run_engine(ds, payload["C_lib"], args, method)
    else:
        from sklearn.svm import LinearSVC  # noqa: F401

        run = run_linearsvc(ds, payload["C_lib"], args)
    print(json.dumps(run._asdict()))


# ---------------------------------------------------------------------------- report
def first_hit(trace, target):
    """(time, iterations) of the first trace entry at or below target; (nan, nan) if none."""
    for t, f, it in trace:
        if f <= target:
            return t, it
    return float("nan"), float("nan")


def lsvc_hit(trace, target):
    times = [(t, it) for t, f, it in trace if f <= target]
    return min(times) if times else (float("nan"), float("nan"))


def stats(values):
    v = np.asarray([x for x in values if np.isfinite(x)])
    if v.size == 0:
        return "never", np.nan
    return f"{v.min():.3g} / {np.median(v):.3g} / {v.max():.3g}", float(np.median(v))


def ds_spec(ds, args):
    """The spec that rebuilds ``ds`` in a child process."""
    if ds.name == "dense":
        return {"kind": "dense", "n": args.dense_n, "d": args.dense_d}
    if ds.name == "sparse":
        return {"kind": "sparse", "n": args.sparse_n, "d": args.sparse_d, "density": args.sparse_density}
    return {"kind": ds.name}


def bench_case(ds, C_lib, args, methods, light_path):
    runs = {}
    for name in methods:
        reps = []
        for _ in range(args.repeat if name in ("ls-bmrm", "linearsvc", "ocas1") else args.ref_repeat):
            if args.fresh_process and name in ("bmrm", "ls-bmrm", "linearsvc"):
                reps.append(run_fresh(ds_spec(ds, args), C_lib, args, name))
            elif name in ("bmrm", "ls-bmrm"):
                reps.append(run_engine(ds, C_lib, args, name))
            elif name == "linearsvc":
                reps.append(run_linearsvc(ds, C_lib, args))
            else:
                reps.append(run_svmocas(ds, C_lib, args, int(name[-1]), light_path))
        runs[name] = reps
    F_ref = min(r.objective for reps in runs.values() for r in reps)
    target = F_ref * (1.0 + args.rel)
    rows, med, iters = [], {}, {}
    for name, reps in runs.items():
        hit = lsvc_hit if name == "linearsvc" else first_hit
        hits = [hit(r.trace, target) for r in reps]
        txt, med[name] = stats([h[0] for h in hits])
        iters[name] = hits[0][1]
        r = reps[0]
        rows.append(
            [
                r.name,
                f"{r.objective:.8g}",
                f"{(r.objective - F_ref) / F_ref:.1e}",
                str(r.n_iter),
                "-" if name == "linearsvc" else f"{hits[0][1]}",
                txt,
                f"{np.median([x.time_s for x in reps]):.3g}",
                r.note,
            ]
        )
    base = med.get("linearsvc", np.nan)
    for row, name in zip(rows, runs):
        row.insert(6, f"{med[name] / base:.2f}" if np.isfinite(base) and np.isfinite(med[name]) else "-")
    summary = []

    def ratio(slow, fast):
        """Iterations to target slow / fast; a lower bound (">") when the slow one never got there."""
        a, b = iters[slow], iters[fast]
        if not np.isfinite(b):
            return f"{a} / never"
        if not np.isfinite(a):
            n = runs[slow][0].n_iter
            return f"never in {n} / {b} = >{n / b:.1f}x"
        return f"{a} / {b} = {a / b:.1f}x"

    if "bmrm" in iters and "ls-bmrm" in iters:
        line = f"iterations to target BMRM / LS-BMRM = {ratio('bmrm', 'ls-bmrm')}"
        if "ocas0" in iters and "ocas1" in iters:
            line += f"; svmocas -m 0 / -m 1 here: {ratio('ocas0', 'ocas1')}"
        if (ds.name, C_lib) in LIBOCAS_RATIO:
            line += f"; ANCHORS.md LIBOCAS: {LIBOCAS_RATIO[(ds.name, C_lib)]}x"
        summary.append(line)
    if "ls-bmrm" in med and np.isfinite(base):
        summary.append(f"time to target LS-BMRM / LinearSVC (medians) = {med['ls-bmrm'] / base:.2f}x")
    return F_ref, rows, summary


HEADER = [
    "method",
    "final F",
    "rel. to F*",
    "iters",
    "iters to target",
    "time to target s (min / med / max)",
    "ratio to LinearSVC",
    "total s (med)",
    "notes",
]


def markdown_table(rows):
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="+", default=["dense", "sparse", "ocr-e", "ocr-26"])
    p.add_argument("--C-lib", type=float, nargs="+", default=[0.01, 1.0], dest="C_lib")
    p.add_argument("--methods", nargs="+", default=["bmrm", "ls-bmrm", "linearsvc", "ocas0", "ocas1"])
    p.add_argument("--repeat", type=int, default=3, help="runs of LS-BMRM, LinearSVC, svmocas -m 1")
    p.add_argument(
        "--ref-repeat",
        type=int,
        default=1,
        dest="ref_repeat",
        help="runs of the plain cutting-plane references BMRM and svmocas -m 0 (default 1)",
    )
    p.add_argument("--rel", type=float, default=1e-4, help="relative target above F* (default 1e-4)")
    p.add_argument(
        "--eps-rel",
        type=float,
        default=1e-6,
        dest="eps_rel",
        help="stopping gap, relative to F on the engine's scale (default 1e-6)",
    )
    p.add_argument("--max-iter", type=int, default=3000, dest="max_iter")
    p.add_argument("--time-limit", type=float, default=600.0, dest="time_limit", help="per run, seconds")
    p.add_argument("--liblinear-max-iter", type=int, default=100_000, dest="liblinear_max_iter")
    p.add_argument("--dense-n", type=int, default=20000, dest="dense_n")
    p.add_argument("--dense-d", type=int, default=500, dest="dense_d")
    p.add_argument("--sparse-n", type=int, default=100000, dest="sparse_n")
    p.add_argument("--sparse-d", type=int, default=50000, dest="sparse_d")
    p.add_argument("--sparse-density", type=float, default=0.001, dest="sparse_density")
    p.add_argument("--quick", action="store_true", help="dense 5000 x 200, sparse 20000 x 10000, repeat 2")
    p.add_argument(
        "--fresh-process",
        action="store_true",
        dest="fresh_process",
        help="run every LS-BMRM / BMRM / LinearSVC fit in a new Python process (imports before the "
        "clock; kernel loading or compilation and back-end probing timed), no warm-up",
    )
    p.add_argument(
        "--cold-numba",
        action="store_true",
        dest="cold_numba",
        help="with --fresh-process: an empty numba cache per child, so every kernel is compiled in the timed fit",
    )
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--out", default=str(ROOT / "docs" / "results" / "linear_svm.md"))
    args = p.parse_args(argv)
    if args.child:
        child_main(args.child)
        return
    if args.quick:
        args.dense_n, args.dense_d, args.sparse_n, args.sparse_d, args.repeat = 5000, 200, 20000, 10000, 2
    methods = list(args.methods)
    if any(m.startswith("ocas") for m in methods) and shutil.which("svmocas") is None:
        print("svmocas not installed (apt-get install libocas-tools): LIBOCAS columns skipped")
        methods = [m for m in methods if not m.startswith("ocas")]

    if not args.fresh_process:
        t0 = time.perf_counter()
        warm = dense_set(300, 5, 0)
        for m in ("bmrm", "ls-bmrm"):
            run_engine(warm, 0.1, args, m)
        run_linearsvc(warm, 0.1, args)
        print(f"warm-up (imports, backend probing; not timed): {time.perf_counter() - t0:.2f} s")

    sets, ocr = [], None
    for name in args.sets:
        if name == "dense":
            sets.append(dense_set(args.dense_n, args.dense_d))
        elif name == "sparse":
            sets.append(sparse_set(args.sparse_n, args.sparse_d, args.sparse_density))
        elif name in ("ocr-e", "ocr-26"):
            ocr = ocr or ocr_sets()
            sets.append(ocr[0] if name == "ocr-e" else ocr[1])
        else:
            p.error(f"unknown set {name!r}")
    load = os.getloadavg()
    lines = [
        "# Linear SVM: BMRM, LS-BMRM, liblinear, LIBOCAS",
        "",
        f"Command: `python -m benchmarks.{Path(__file__).stem} {' '.join(argv if argv is not None else sys.argv[1:])}`",
        f"Date: {time.strftime('%Y-%m-%d %H:%M')}; load average at start {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f} on {os.cpu_count()} cores; BLAS threads: {os.environ.get('OPENBLAS_NUM_THREADS')}; "
        f"target F* (1 + {args.rel:g}); {args.repeat} runs of LS-BMRM, LinearSVC and svmocas -m 1, "
        f"{args.ref_repeat} of BMRM and svmocas -m 0.",
        "",
    ]
    if args.fresh_process:
        lines[-1:-1] = [
            "Every LS-BMRM, BMRM and LinearSVC fit ran in a new Python process, imports before the clock "
            + (
                "and an empty numba cache (every kernel the fit uses compiled in the timed fit)."
                if args.cold_numba
                else "and numba's disk cache as an earlier run left it (kernels loaded, not compiled, in the timed fit)."
            ),
        ]
    for ds in sets:
        with tempfile.TemporaryDirectory() as tmp:
            light = None
            if any(m.startswith("ocas") for m in methods):
                from sklearn.datasets import dump_svmlight_file

                light = Path(tmp) / f"{ds.name}.light"
                y_file = ds.y + 1 if ds.multiclass else ds.y
                dump_svmlight_file(ds.X, y_file, str(light), zero_based=False)
            for C_lib in args.C_lib:
                F_ref, rows, summary = bench_case(ds, C_lib, args, methods, light)
                shape = f"{ds.X.shape[0]} x {ds.X.shape[1]}" + (f", nnz {ds.X.nnz}" if sp.issparse(ds.X) else "")
                title = f"## {ds.name} ({shape}), C_lib = {C_lib:g}: F* = {F_ref:.10g}"
                print("\n" + title)
                table = markdown_table(rows)
                print(table)
                for s in summary:
                    print(s)
                lines += [title, "", table, ""] + [f"- {s}" for s in summary] + [""]
                Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                Path(args.out).write_text("\n".join(lines) + "\n")
    lines.append(f"Load average at the end: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
