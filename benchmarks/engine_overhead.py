"""Per-iteration overhead of the engine: reduced QP solves through cvxpy, side by side.

For working sets of n cuts (default 10, 50, 100, 200) in dimension d, times one reduced solve
of the L2 dual QP with each formulation of :class:`cutplane.reduced.qp.QPReducedSolver`:

- ``dpp``: parametrised problem compiled once per capacity bucket, parameters substituted;
- ``direct``: a fresh ``quad_form(alpha, psd_wrap(G))`` problem per solve;

and, as the floor, the backend's own solve time reported by cvxpy (``solver_stats``); then the
native active-set solver (``ACTIVESET``, the default backend since issue 5) on the same working
sets, with its lower bound against the cvxpy one. Then a
full BMRM run on a random hinge problem splits wall time into oracle / reduced solver /
engine bookkeeping (everything else: working set, Gram rows, checks).

Then the structured case of issue 9: BMRM on generated first-order tagging data (the structure of
``problems.synthetic.make_tagging_task``: Markov labels, informative and noise columns, unigram
and previous-token templates; generated here directly as index arrays so that n = 1e5 sentences
take seconds) for n = 1e3, 1e4, 1e5 sentences, running to a fixed number of cuts (no pruning,
eps never reached) with the serial oracle; it reports the fraction of wall time outside the
oracle, the reduced solver's share, and the time per iteration at the end of the run against n.
A grid entry ending in ``:pK`` runs with ``prune_after=K`` (cuts idle for K iterations are
dropped) instead of keeping every cut. ``--gram-reference CONFIG:N:CUTS`` times one Gram row (the new cut against every
stored cut, the part of the engine that grows with the working set) beside scipy's sparse
products on the same rows in the same run (:func:`gram_row_reference`).
``--profile N CUTS`` adds a cProfile of one run, listing the functions outside the oracle that
take the time. That section is written to ``docs/results/engine_overhead.md``.

Usage: ``python -m benchmarks.engine_overhead [--dim 500] [--sizes 10 50 200] [--repeat 5]``
``[--skip-qp] [--grid small:10000:50,200 large:10000:200 conll2000:8936:200:p50]``
``[--gram-reference large:10000:200 conll2000:8936:100] [--profile large 10000 200] [--no-write]``
"""

from __future__ import annotations

import argparse
import io
import os
import time
import warnings
from pathlib import Path

import numpy as np

from cutplane import minimize
from cutplane.cuts import Cut, OracleResult
from cutplane.reduced.qp import QPReducedSolver
from cutplane.regularizers import L2
from cutplane.working_set import WorkingSet


def working_set(n, dim, rng):
    ws = WorkingSet(dim)
    for _ in range(n):
        ws.add(Cut(rng.standard_normal(dim) / np.sqrt(dim), float(rng.random())))
    return ws


def time_solves(solver, ws, lam, repeat):
    solver.solve(ws, lam)  # compile / warm caches
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sol = solver.solve(ws, lam)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), sol


def backend_time(ws, lam, backend):
    """The backend's own solve time for the direct problem (cvxpy's solver_stats)."""
    import cvxpy as cp

    G = ws.gram()
    alpha = cp.Variable(ws.n_cuts, nonneg=True)
    prob = cp.Problem(
        cp.Maximize(ws.offsets @ alpha - 0.5 / lam * cp.quad_form(alpha, cp.psd_wrap(G))), [cp.sum(alpha) == 1]
    )
    prob.solve(solver=backend)
    return float(prob.solver_stats.solve_time or np.nan)


def make_sequences(
    n, *, n_labels=8, vocab=5000, per_label=5, n_informative=2, n_noise=4, lengths=(6, 12), signal=0.7, seed=0
):
    """Generated tagging data as index arrays: (indptr, indices, sentence_ptr, labels, n_features).

    Labels follow a Markov chain (stay with probability 1/2); an informative column shows one of
    the label's ``per_label`` own words with probability ``signal``, else a word of the shared
    vocabulary; noise columns always draw from it. Templates: ``U0j:%x[0,j]`` for every column
    and ``U1j:%x[-1,j]`` for the informative ones (value ``BOS`` at a sentence start).
    """
    rng = np.random.default_rng(seed)
    lens = rng.integers(lengths[0], lengths[1] + 1, size=n)
    sentence_ptr = np.concatenate(([0], np.cumsum(lens)))
    n_tok = int(sentence_ptr[-1])
    first = np.zeros(n_tok, dtype=bool)
    first[sentence_ptr[:-1]] = True
    stay = (rng.random(n_tok) < 0.5) & ~first
    segment = np.cumsum(~stay) - 1
    labels = rng.integers(0, n_labels, size=int(segment[-1]) + 1)[segment].astype(np.int32)
    n_vals = vocab + n_labels * per_label + 1  # shared words, label words, BOS
    cols = []
    for j in range(n_informative + n_noise):
        v = rng.integers(0, vocab, size=n_tok)
        if j < n_informative:
            own = rng.random(n_tok) < signal
            v[own] = vocab + labels[own] * per_label + rng.integers(0, per_label, size=int(own.sum()))
        cols.append(v)
    feats = [cols[j] for j in range(n_informative + n_noise)]
    for j in range(n_informative):
        prev = np.roll(cols[j], 1)
        prev[first] = n_vals - 1
        feats.append(prev)
    n_templates = len(feats)
    indices = (np.stack(feats, axis=1) + n_vals * np.arange(n_templates)).astype(np.int32).ravel()
    indptr = np.arange(n_tok + 1, dtype=np.int64) * n_templates
    return indptr, indices, sentence_ptr, labels, n_vals * n_templates


CONFIGS = {  # make_tagging_task's defaults, and a large vocabulary (dense-ish cuts in a larger dim)
    "small": dict(n_labels=4, vocab=30),
    "large": dict(n_labels=8, vocab=5000),
}


def conll2000_oracle(n):
    """The serial 1-slack oracle of ``SequenceTagger`` on the first ``n`` CoNLL-2000 training
    sentences with the CRF++ chunking templates (the real task of issue 4; data from
    ``$CUTPLANE_DATA`` or ``../shared/data``)."""
    from problems import SequenceTagger
    from problems.datasets import dataset_path
    from problems.io.conll import read_conll
    from problems.sequence.template_sets import CHUNKING
    from problems.solvers import CuttingPlane

    data = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"))
    return SequenceTagger(CHUNKING, min_count=1, solver=CuttingPlane(executor="serial")).make_oracle(
        data.inputs[:n], data.labels[:n]
    )


REAL = {"conll2000": conll2000_oracle}  # real-data configurations (n = sentences from the start)


def sequence_oracle(config, n, seed=0):
    """The serial 1-slack sequence oracle of a configuration: ``REAL`` data, or generated
    (:func:`make_sequences` with ``CONFIGS[config]``)."""
    from oracles.sequence import SequenceHingeOracle

    if config in REAL:
        return REAL[config](n)
    indptr, indices, sentence_ptr, labels, n_features = make_sequences(n, seed=seed, **CONFIGS[config])
    return SequenceHingeOracle(indptr, indices, sentence_ptr, labels, n_features, CONFIGS[config]["n_labels"])


class CpuTimed:
    """An oracle wrapper that adds up the CPU time (``time.thread_time``) spent in the oracle."""

    def __init__(self, oracle):
        self.oracle, self.dim, self.cpu, self.per_call = oracle, oracle.dim, 0.0, []

    def __call__(self, w):
        t = time.thread_time()
        out = self.oracle(w)
        self.per_call.append(time.thread_time() - t)
        self.cpu += self.per_call[-1]
        return out

    def __getattr__(self, name):
        return getattr(self.oracle, name)


def structured_run(n, n_cuts, lam, config="small", seed=0, profile=False, prune_after=None):
    """BMRM to ``n_cuts`` iterations on generated data; returns a dict of wall and CPU timings.

    ``prune_after=None`` keeps every cut (the working set holds ``n_cuts`` cuts at the end);
    ``prune_after=k`` drops cuts idle for k iterations (``minimize``'s default: 15).

    CPU times (this process, which runs everything in one thread: serial oracle, one BLAS thread)
    do not count the waits for a core on a loaded machine, so their ratios are the stable figures.
    """
    oracle = CpuTimed(sequence_oracle(config, n, seed))
    oracle(np.zeros(oracle.dim))  # numba cache
    oracle.cpu, oracle.per_call = 0.0, []
    stamps = []
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    cpu0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(
            oracle,
            L2(),
            lam,
            eps=1e-12,
            max_iter=n_cuts,
            prune_after=prune_after,
            callback=lambda info: stamps.append(time.process_time()) and False,
        )
    cpu = time.process_time() - cpu0
    if prof is not None:
        prof.disable()
    per_iter = np.diff(stamps)
    tail = slice(max(0, len(per_iter) - max(5, len(per_iter) // 10)), None)
    h = res.history
    return dict(
        config=config,
        prune_after=prune_after,
        n=oracle.n_samples,
        tokens=int(oracle.sentence_ptr[-1]),
        dim=oracle.dim,
        cuts=n_cuts,
        n_iter=res.n_iter,
        n_cuts_end=int(h.n_cuts[-1]),
        total=res.time_s,
        oracle=res.oracle_time_s,
        solver=res.solver_time_s,
        cpu=cpu,
        oracle_cpu=oracle.cpu,
        tail_cpu=float(per_iter[tail].mean()),
        tail_oracle_cpu=float(np.mean(oracle.per_call[1:][tail])),
        tail_solver=float(h.solver_time[1:][tail].mean()),
        profile=prof,
    )


def structured_section(grid, lam, profile_spec, say):
    say(
        f"BMRM (L2, lam={lam:g}, no pruning, eps never reached) on generated tagging data: 6 columns "
        "(2 informative), 8 templates, 6-12 tokens per sentence; serial oracle. Configurations: `small` = "
        "make_tagging_task's defaults (4 labels, vocabulary 30 per column), `large` = 8 labels, vocabulary 5000. "
        "`conll2000` = the first n CoNLL-2000 training sentences with the CRF++ chunking templates "
        "(issue 4's task: 22 labels, 10^7 coordinates for all of them). "
        "CPU = process CPU time (everything runs in one thread), immune to waiting for a core; wall = "
        "``Result.time_s`` / ``oracle_time_s`` / ``solver_time_s``."
    )
    say()
    say(
        "A grid entry `config:n:cuts,...:p50` runs with `prune_after=50` (cuts idle for "
        "50 iterations are dropped), shown as `iterations (cuts at the end)`; without it no cut is dropped."
    )
    say()
    say(
        "| data | n | tokens | dim | iterations (cuts) | wall s | outside oracle (wall) | CPU s | outside oracle (CPU) | "
        "CPU ms/iter (last 10%) | oracle CPU ms/iter | engine CPU ms/iter | solver wall ms/iter |"
    )
    say("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    structured_run(200, 5, lam)  # warm-up: imports, numba caches of the oracle and the working set
    rows = []
    for config, n, cuts, prune in grid:
        r = structured_run(n, cuts, lam, config, prune_after=prune)
        rows.append(r)
        shown = str(r["n_cuts_end"]) if prune is None else f"{r['n_iter']} ({r['n_cuts_end']})"
        say(
            f"| {config} | {n} | {r['tokens']} | {r['dim']} | {shown} | {r['total']:.2f} | "
            f"{100 * (1 - r['oracle'] / r['total']):.1f}% | {r['cpu']:.2f} | "
            f"{100 * (1 - r['oracle_cpu'] / r['cpu']):.1f}% | {1e3 * r['tail_cpu']:.1f} | "
            f"{1e3 * r['tail_oracle_cpu']:.1f} | {1e3 * (r['tail_cpu'] - r['tail_oracle_cpu']):.1f} | "
            f"{1e3 * r['tail_solver']:.1f} |"
        )
    say()
    by_cuts = {}
    for r in rows:
        if r["prune_after"] is None:
            by_cuts.setdefault((r["config"], r["cuts"]), []).append(r)
    say(
        "CPU time per iteration (last 10% of the run) against n at a fixed number of cuts "
        "(linear in n: the ratio of tokens):"
    )
    say()
    for (config, cuts), rs in sorted(by_cuts.items()):
        rs = sorted(rs, key=lambda r: r["n"])
        for a, b in zip(rs[:-1], rs[1:]):
            say(
                f"- {config}, {cuts} cuts: n {a['n']} -> {b['n']}: tokens x{b['tokens'] / a['tokens']:.1f}, "
                f"time per iteration x{b['tail_cpu'] / a['tail_cpu']:.1f} "
                f"(oracle x{b['tail_oracle_cpu'] / a['tail_oracle_cpu']:.1f}, engine "
                f"x{(b['tail_cpu'] - b['tail_oracle_cpu']) / (a['tail_cpu'] - a['tail_oracle_cpu']):.1f})"
            )
    if profile_spec:
        import pstats

        config, n, cuts = profile_spec
        structured_run(200, 5, lam, config)
        r = structured_run(int(n), int(cuts), lam, config, profile=True)
        buf = io.StringIO()
        pstats.Stats(r["profile"], stream=buf).sort_stats("tottime").print_stats(25)
        say()
        say(
            f"cProfile of {config} data, n={n}, {cuts} cuts (wall {r['total']:.2f} s, oracle {r['oracle']:.2f} s; "
            f"CPU {r['cpu']:.2f} s, oracle {r['oracle_cpu']:.2f} s), top functions by own time:"
        )
        say()
        say("```")
        for line in buf.getvalue().splitlines():
            if line.strip() and not line.startswith(("   Ordered", "         ")) or "ncalls" in line:
                say(line.rstrip()[:160])
        say("```")
    return rows


class KeepCuts(CpuTimed):
    """:class:`CpuTimed` that also keeps every cut's slope (CSR), for :func:`gram_row_reference`."""

    def __init__(self, oracle):
        super().__init__(oracle)
        self.slopes = []

    def __call__(self, w):
        out = super().__call__(w)
        self.slopes.append(out.cut.slope.tocsr())
        return out


def _median_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def gram_row_reference(config, n, n_cuts, lam, say, repeat=5):
    """One Gram row (the new cut against every stored cut) by the working set, side by side with
    scipy's sparse products on the same float64 rows in the same run.

    BMRM runs ``n_cuts`` iterations (no pruning) keeping the slopes; the working set of the first
    ``n_cuts - 1`` takes the last one. References: ``A @ a`` with ``A`` the stored rows as a
    float64 CSR matrix and ``a`` the new slope dense (scipy's ``csr_matvec``, one thread), and
    ``A @ a.T`` with ``a`` sparse. The working set runs on its thread pool, then on one thread.
    """
    import scipy.sparse as sp

    import cutplane.working_set.sparse_rows as rows_module
    from cutplane.working_set import WorkingSet

    oracle = KeepCuts(sequence_oracle(config, n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        minimize(oracle, L2(), lam, eps=1e-12, max_iter=n_cuts, prune_after=None)
    stored, new = oracle.slopes[:-1], oracle.slopes[-1]
    ws = WorkingSet(oracle.dim)
    for a in stored:
        ws.add(Cut(a, 0.0))
    idx, data = ws._split_slope(new)
    A = sp.vstack(stored).tocsr()
    dense = new.toarray().ravel()
    ours = ws._cross(idx, data)[0]
    ref = A @ dense
    err = float(np.max(np.abs(ours - ref)) / max(np.max(np.abs(ref)), 1e-300))
    t_threads = _median_ms(lambda: ws._cross(idx, data), repeat)
    saved = rows_module._CPUS
    rows_module._CPUS = 1
    try:
        t_one = _median_ms(lambda: ws._cross(idx, data), repeat)
    finally:
        rows_module._CPUS = saved
    t_matvec = _median_ms(lambda: A @ dense, repeat)
    t_spsp = _median_ms(lambda: A @ new.T, repeat)
    oracle_ms = 1e3 * float(np.median(oracle.per_call[1:]))
    nnz = int(A.nnz)
    say(
        f"| {config} | {n} | {oracle.dim} | {len(stored)} | {nnz} | {ws._store.slope_bytes / nnz:.1f} | "
        f"{t_threads:.1f} | {t_one:.1f} | {t_matvec:.1f} | {t_spsp:.1f} | {t_matvec / t_one:.2f} | "
        f"{oracle_ms:.1f} | {err:.1e} |"
    )


def parse_grid_entry(entry, cuts):
    """``(config, n, cuts, prune_after)`` of a grid entry ``config:n:cuts,...[:p50]``."""
    parts = entry.split(":")
    prune = None
    if len(parts) > 3:
        if not parts[3].startswith("p"):
            raise SystemExit(f"grid entry {entry!r}: the fourth field is pK (prune_after=K)")
        prune = int(parts[3][1:])
    return parts[0], int(float(parts[1])), int(cuts), prune


class Hinge:
    def __init__(self, X, y):
        self.X, self.y, self.dim = X, y, X.shape[1]

    def __call__(self, w):
        m = 1.0 - self.y * (self.X @ w)
        act = m > 0
        val = float(np.maximum(m, 0).mean())
        a = -(self.y[act, None] * self.X[act]).sum(axis=0) / len(self.y)
        return OracleResult(val, Cut(a, val - float(a @ w)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dim", type=int, default=500)
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100, 200])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--backends", nargs="+", default=["CLARABEL", "ECOS"])
    p.add_argument("--lam", type=float, default=1e-2)
    p.add_argument("--n-train", type=int, default=5000)
    p.add_argument("--skip-qp", action="store_true", help="only the structured section")
    p.add_argument(
        "--grid",
        nargs="+",
        default=[
            "small:1000:50,200,500",
            "small:10000:50,200,500",
            "small:100000:50,200",
            "large:1000:50,200",
            "large:10000:50,200",
            "large:100000:50",
        ],
        help="config:n:cuts,cuts,... for the structured section (config: small, large, or conll2000 when the data is present)",
    )
    p.add_argument("--struct-lam", type=float, default=1e-4)
    p.add_argument(
        "--gram-reference",
        nargs="*",
        default=["large:10000:200"],
        metavar="CONFIG:N:CUTS",
        help="time one Gram row against scipy's sparse products (see gram_row_reference)",
    )
    p.add_argument("--profile", nargs=3, metavar=("CONFIG", "N", "CUTS"), default=None)
    p.add_argument("--no-write", action="store_true")
    p.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="BLAS threads in the structured section (0: library default). On this shared 2-core "
        "machine OpenBLAS with 2 threads took ~20 ms for a dot of 3e5 doubles (0.27 ms with 1)",
    )
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    if not args.skip_qp:
        qp_sections(args, rng)
    report = []

    def say(line=""):
        print(line, flush=True)
        report.append(line)

    load0 = os.getloadavg()
    say(f"- machine: {os.cpu_count()} cores, shared; load average at start {load0[0]:.2f} (1 min)")
    grid = [parse_grid_entry(g, c) for g in args.grid for c in g.split(":")[2].split(",")]
    from threadpoolctl import threadpool_info, threadpool_limits

    limits = threadpool_limits(args.blas_threads) if args.blas_threads > 0 else None
    say(f"- BLAS threads: {[i['num_threads'] for i in threadpool_info()]} (--blas-threads {args.blas_threads})")
    try:
        structured_section(grid, args.struct_lam, args.profile, say)
        if args.gram_reference:
            say()
            say(
                "One Gram row against scipy in the same run (`--gram-reference config:n:cuts`): the working set's "
                "row of inner products of the new cut with every stored cut (its thread pool, then one thread), "
                "beside scipy's `A @ a` (CSR times the dense new slope, one thread) and `A @ a.T` (sparse new "
                "slope) on the same rows as float64 CSR. `bytes/nnz`: the working set's storage per stored "
                "nonzero (int32 index and int16 / int32 counts or float64 values). `rel. diff`: largest "
                "difference from scipy's row relative to its largest entry."
            )
            say()
            say(
                "| data | n | dim | stored cuts | stored nnz | bytes/nnz | ours ms (threads) | ours ms (1 thread) | "
                "scipy A@a ms | scipy A@a.T ms | scipy / ours (1 thread) | oracle ms/call | rel. diff |"
            )
            say("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for entry in args.gram_reference:
                config, n, cuts = entry.split(":")
                gram_row_reference(config, int(float(n)), int(cuts), args.struct_lam, say)
    finally:
        if limits is not None:
            limits.restore_original_limits()
    say()
    say(f"- load average at end {os.getloadavg()[0]:.2f} (1 min)")
    if not args.no_write:
        out = Path(__file__).resolve().parent.parent / "docs" / "results" / "engine_overhead.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            "# Engine overhead on structured data (time outside the oracle)\n\n"
            "Written by `python -m benchmarks.engine_overhead --skip-qp` (structured section).\n\n"
            + "\n".join(report)
            + "\n"
        )
        print(f"wrote {out}")


def qp_sections(args, rng):

    print(f"reduced L2 QP solve, dim={args.dim}, lam={args.lam}, median of {args.repeat} (ms)")
    print(f"{'backend':>9} {'cuts':>5} {'dpp':>8} {'direct':>8} {'backend':>8} {'dpp/direct':>10} {'|dLB|':>9}")
    for backend in args.backends:
        for n in args.sizes:
            ws = working_set(n, args.dim, rng)
            t_dpp, s_dpp = time_solves(QPReducedSolver(L2(), backend, formulation="dpp"), ws, args.lam, args.repeat)
            t_dir, s_dir = time_solves(QPReducedSolver(L2(), backend, formulation="direct"), ws, args.lam, args.repeat)
            t_bk = backend_time(ws, args.lam, backend)
            print(
                f"{backend:>9} {n:>5} {1e3 * t_dpp:8.2f} {1e3 * t_dir:8.2f} {1e3 * t_bk:8.2f} "
                f"{t_dpp / t_dir:10.2f} {abs(s_dpp.lower_bound - s_dir.lower_bound):9.1e}"
            )

    print(f"\nnative ACTIVESET (cold start, no warm duals) vs cvxpy direct on {args.backends[0]}, median (ms)")
    print(f"{'cuts':>5} {'native':>8} {'direct':>8} {'direct/native':>13} {'LB native - LB cvxpy':>21}")
    for n in args.sizes:
        ws = working_set(n, args.dim, rng)
        t_nat, s_nat = time_solves(QPReducedSolver(L2(), "ACTIVESET"), ws, args.lam, args.repeat)
        t_dir, s_dir = time_solves(
            QPReducedSolver(L2(), args.backends[0], formulation="direct"), ws, args.lam, args.repeat
        )
        print(
            f"{n:>5} {1e3 * t_nat:8.2f} {1e3 * t_dir:8.2f} {t_dir / t_nat:13.1f} "
            f"{s_nat.lower_bound - s_dir.lower_bound:21.1e}"
        )

    X = rng.standard_normal((args.n_train, 50)) / np.sqrt(50)
    y = np.sign(X @ rng.standard_normal(50) + 0.3 * rng.standard_normal(args.n_train))
    print(f"\nBMRM on a {args.n_train} x 50 hinge problem (lam={args.lam}, eps=1e-4), time split:")
    print(
        f"{'formulation':>11} {'iters':>6} {'total s':>8} {'oracle s':>8} {'solver s':>8} {'engine s':>8} "
        f"{'solver ms/it':>12} {'engine ms/it':>12}"
    )
    for formulation in ("native", "auto", "dpp", "direct"):
        reg = L2()
        if formulation == "native":
            reduced = QPReducedSolver(reg, "ACTIVESET")
        else:
            reduced = QPReducedSolver(reg, args.backends, formulation=formulation)
        res = minimize(Hinge(X, y), reg, args.lam, eps=1e-4, max_iter=1000, solver=reduced)
        engine = res.time_s - res.oracle_time_s - res.solver_time_s
        print(
            f"{formulation:>11} {res.n_iter:>6} {res.time_s:8.3f} {res.oracle_time_s:8.3f} "
            f"{res.solver_time_s:8.3f} {engine:8.3f} {1e3 * res.solver_time_s / res.n_iter:12.2f} "
            f"{1e3 * engine / res.n_iter:12.2f}"
        )


if __name__ == "__main__":
    main()
