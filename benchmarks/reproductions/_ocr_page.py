"""The Markdown page of ``python -m benchmarks.reproductions.ocr_chain_mkl``, written from one or several fold records.

Every number on the page is read from the records (:mod:`_ocr_folds`); nothing is typed.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from benchmarks.reproductions._ocr_folds import (
    PAPER,
    SINGLE,
    TARGET,
    best_single,
    grid_edges,
    not_converged,
    p_text,
    paired,
    run_name,
    summaries,
)


def _pct(x, signed=False):
    return "-" if x is None or not np.isfinite(x) else (f"{x:+.2%}" if signed else f"{x:.2%}")


def _solver_keys(runs):
    return list(dict.fromkeys(r["solver"] for r in runs[0]["rows"]))


def _settings(runs):
    s, r0 = runs[0]["settings"], runs[0]
    folds = [r["fold"] for r in runs]
    out = [
        f"- Folds run: **{len(folds)} of 10 ({', '.join(map(str, folds))})**"
        + (" (SPOM Table 1 averages all 10)." if len(folds) < 10 else ".")
        + " Per fold: train on that fold, "
        "choose C on words of the next fold, test on words of the 8 remaining folds:",
        "",
    ]
    out += [
        "| fold | train words (characters) | validation fold: words (characters) | test words (characters) "
        "of the pool | run time | run date |",
        "|---|---|---|---|---|---|",
    ]
    for r in runs:
        out.append(
            f"| {r['fold']} | {r['train']['words']} ({r['train']['chars']}) | {r['val']['fold']}: "
            f"{r['val']['words']} ({r['val']['chars']}) | {r['test']['words']} ({r['test']['chars']}) of "
            f"{r['test']['pool_words']} | {r['total_s']:.0f} s | {r['date']} |"
        )
    sub = r0["test"]["words"] < r0["test"]["pool_words"]
    out += [
        "",
        "- Test words: "
        + (
            f"a random subsample (seed {s['seed']}) of the remaining folds' words."
            if sub
            else "all the remaining folds' words."
        ),
        f"- C chosen per model, solver and fold from {{{', '.join(f'{c:g}' for c in s['C'])}}} (package scale "
        "F = Omega + C * mean loss, reported as lam*Omega + mean loss with lam = 1/C; SPOM's C = 1/(lam N) is "
        "the package's C / N, N = training words) by per-character validation accuracy, never by test (SPOM: "
        "5-fold CV over 6 values).",
        "- Features per character, each block normalised to unit norm: linear (128), exact quadratic map of "
        f"(x.x' + 1)^2 (8257, sparse), Gaussian sigma^2 = 5 by Nystroem with {s['n_components']} landmarks from "
        "the training characters of the fold (an approximation of the kernel).",
    ]
    if "mtl" in s["solver"]:
        out.append(
            f"- Solver MTL^struct: `cutplane.minimize` (BMRM; MixedNorm(p=1) for MKL, MixedNorm(p="
            f"{p_text(s['pmkl_p'])}) for pMKL, L2 otherwise) to a certified gap {s['mtl_rel_eps']:g} F(0) "
            f"(F(0) = R(0), the mean Hamming loss of w = 0) or {s['mtl_time_limit']:g} s per fit."
        )
    if "spom" in s["solver"]:
        out.append(
            f"- Solver SPOM: {s['epochs']} epochs, eta_t = eta0/sqrt(t), eta0 from "
            f"{{{', '.join(f'{g:g}' for g in s['eta_grid'])}}} by Table 1's rule (lowest objective after "
            f"{s['tune_epochs']} epochs of the returned model on {s['tune_words'] or 'all'} training words), "
            f"returning the {' and the '.join(s['model'])} model (one row each); no certificate."
        )
    cmds = {}
    for r in runs:
        cmds.setdefault(r["command"], []).append(str(r["fold"]))
    out.append(
        "- Command(s) of the runs: " + "; ".join(f"fold(s) {', '.join(f)}: `{c}`" for c, f in cmds.items()) + "."
    )
    return out


def _results(runs, summ):
    n = len(runs)
    out = [
        "| kernel | solver | folds | test acc. mean +- std over folds | per fold | C chosen per fold | "
        "SPOM Table 1 (10 folds) | group-norm shares (mean over folds) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (key, solver), m in summ.items():
        beta = "-" if m.beta is None else ", ".join(f"{n_} {b:.3f}" for n_, b in zip(m.beta_names, m.beta.mean(0)))
        std = f" +- {m.std:.2%}" if n > 1 else " (one fold)"
        out.append(
            f"| {m.label} | {run_name(solver)} | {n} | **{m.mean:.2%}**{std} | "
            + ", ".join(_pct(t) for t in m.tests)
            + " | "
            + ", ".join(f"{c['C']:g}" for c in m.chosen)
            + f" | {_pct(PAPER.get(key))} | {beta} |"
        )
    return out


def _comparisons(runs, summ):
    """The paired comparisons of each MKL row against the best single kernel, the average and each other."""
    out = []
    for solver in _solver_keys(runs):
        best = best_single(summ, solver)
        for a in ("MKL", "pMKL"):
            if (a, solver) not in summ:
                continue
            for b in dict.fromkeys([best, "A", "Q"] + (["MKL"] if a == "pMKL" else [])):
                if b is not None and (b, solver) in summ and b != a:
                    out.append((paired(runs, solver, a, b), b == best))
    return out


def _paired_table(comps, summ):
    out = [
        "| solver | difference | per fold (+- paired standard error) | mean +- std over folds | folds where "
        "the first is ahead |",
        "|---|---|---|---|---|",
    ]
    for p, is_best in comps:
        tag = " (best single kernel)" if is_best else ""
        out.append(
            f"| {run_name(p.solver)} | {p.a} - {p.b}{tag} | "
            + ", ".join(f"fold {f}: {d:+.2%} +- {s:.2%}" for f, d, s in zip(p.folds, p.diffs, p.ses))
            + f" | **{p.mean:+.2%}**"
            + (f" +- {p.std:.2%}" if len(p.folds) > 1 else "")
            + f" | {p.n_ahead} of {len(p.folds)} |"
        )
    return out


def _verdicts(runs, summ):
    out = []
    for solver in _solver_keys(runs):
        for a in ("MKL", "pMKL"):
            if (a, solver) not in summ:
                continue
            m = summ[a, solver].mean
            others = {k: summ[k, solver].mean for k in SINGLE + ("A",) if (k, solver) in summ}
            s = (
                f"- {run_name(solver)}: {a} {m:.2%} (mean over {len(runs)} fold(s)) "
                + ("reaches" if m >= TARGET else "misses")
                + f" {TARGET:.1%}"
            )
            if others:
                worse = [k for k, v in others.items() if v >= m]
                s += (
                    "; it beats " + ", ".join(others) + " on average"
                    if not worse
                    else "; it does NOT beat " + ", ".join(f"{k} ({others[k]:.2%})" for k in worse)
                )
            out.append(s + ".")
    return out or ["- no MKL row in these runs."]


def _per_fold_rows(runs):
    out = [
        "| fold | kernel | solver | C | training time | objective lam*Omega + mean loss | certified gap (status) | "
        "detail | validation acc. | test acc. |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        for r in run["rows"]:
            g = r["grid"][r["chosen"]]
            gap = "-" if g["lower_bound"] is None else f"{g['objective'] - g['lower_bound']:.2g} ({g['status']})"
            out.append(
                f"| {run['fold']} | {r['label']} | {run_name(r['solver'])} | {g['C']:g} | {g['time_s']:.0f} s "
                f"| {g['objective']:.5f} | {gap} | {g['detail']} | {g['val']:.2%} | {r['test']:.2%} |"
            )
    return out


def _grid_table(runs):
    Cs = runs[0]["settings"]["C"]
    out = ["| kernel | solver | " + " | ".join(f"C = {c:g}" for c in Cs) + " |", "|---|---|" + "---|" * len(Cs)]
    for r0 in runs[0]["rows"]:
        rows = [next(r for r in run["rows"] if r["key"] == r0["key"] and r["solver"] == r0["solver"]) for run in runs]
        cells = []
        for i in range(len(Cs)):
            val = np.mean([r["grid"][i]["val"] for r in rows])
            chosen = sum(r["chosen"] == i for r in rows)
            nc = sum(r["grid"][i]["status"] not in ("converged",) for r in rows if r["solver"] == "mtl")
            cells.append(f"{val:.2%} (chosen {chosen}/{len(rows)}" + (f", {nc} not converged" if nc else "") + ")")
        out.append(f"| {r0['label']} | {run_name(r0['solver'])} | " + " | ".join(cells) + " |")
    return out


def _spom_excess(runs):
    """Mean over folds of SPOM's objective above MTL's certified lower bound at the same C."""
    Cs = runs[0]["settings"]["C"]
    out = []
    for r0 in runs[0]["rows"]:
        if r0["solver"] == "mtl" or not any(r["key"] == r0["key"] and r["solver"] == "mtl" for r in runs[0]["rows"]):
            continue
        ex = np.zeros((len(runs), len(Cs)))
        for j, run in enumerate(runs):
            by = {r["solver"]: r for r in run["rows"] if r["key"] == r0["key"]}
            for i in range(len(Cs)):
                lb = by["mtl"]["grid"][i]["lower_bound"]
                ex[j, i] = (by[r0["solver"]]["grid"][i]["objective"] - lb) / lb
        out.append(
            f"| {r0['label']} | {run_name(r0['solver'])} | " + " | ".join(f"{e:+.0%}" for e in ex.mean(0)) + " |"
        )
    if not out:
        return []
    return [
        "",
        "SPOM's optimisation error against MTL^struct's certified lower bound on min F at the same C "
        "((F_SPOM - lower bound) / lower bound, mean over folds):",
        "",
        "| kernel | SPOM | " + " | ".join(f"C = {c:g}" for c in Cs) + " |",
        "|---|---|" + "---|" * len(Cs),
    ] + out


def _findings(runs, summ, comps):
    out, k = [], 0
    nf = len(runs)
    for solver in _solver_keys(runs):
        best = best_single(summ, solver)
        if best is None:
            continue
        k += 1
        b = summ[best, solver]
        rest = [f"{kk} {summ[kk, solver].mean:.2%}" for kk in SINGLE if (kk, solver) in summ and kk != best]
        s = (
            f"{k}. **{run_name(solver)}: best single kernel {best}** ({b.mean:.2%} over {nf} fold(s)"
            + ("; " + ", ".join(rest) if rest else "")
            + ")."
        )
        for p, is_best in comps:
            if p.solver == solver and is_best:
                va = np.mean([c["val"] for c in summ[p.a, solver].chosen])
                vb = np.mean([c["val"] for c in b.chosen])
                s += (
                    f" {p.a} - {best}: "
                    + ", ".join(f"fold {f} {d:+.2%} +- {e:.2%}" for f, d, e in zip(p.folds, p.diffs, p.ses))
                    + f"; over folds {p.mean:+.2%}"
                    + (f" +- {p.std:.2%} (std)" if nf > 1 else "")
                    + f", ahead on {p.n_ahead} of {nf} fold(s)"
                    + (
                        " (|mean| within one standard deviation over folds: not established)"
                        if nf > 1 and abs(p.mean) <= p.std
                        else ""
                    )
                    + f"; validation accuracy of the chosen fits (mean over folds) {p.a} {va:.2%} vs {best} {vb:.2%}."
                )
        out.append(s)
    for a in ("MKL", "pMKL"):
        m = summ.get((a, "mtl"))
        if m is not None and m.beta is not None:
            k += 1
            sh = dict(zip(m.beta_names, m.beta.mean(0)))
            top = max((n for n in sh if n != "T"), key=sh.get)
            out.append(
                f"{k}. **What {a} (MTL^struct) learns.** Group-norm shares ||w_k|| / sum_j ||w_j|| (mean over "
                "folds): "
                + ", ".join(f"{n} {v:.3f}" for n, v in sh.items())
                + f"; the largest kernel share is {top}"
                + (f", which alone reaches {summ[top, 'mtl'].mean:.2%}." if (top, "mtl") in summ else ".")
            )
    edges = grid_edges(runs)
    k += 1
    if len(runs[0]["settings"]["C"]) < 2:
        out.append(f"{k}. **C**: a grid of one value, so C was not chosen.")
    else:
        out.append(
            f"{k}. **C at the edge of the grid** (a C beyond the grid might do better): "
            + (
                "; ".join(f"fold {f} {key} [{s}] C = {C:g} ({e})" for f, key, s, C, e in edges)
                if edges
                else "none: every chosen C lies inside the grid"
            )
            + "."
        )
    nc = not_converged(runs)
    k += 1
    if nc:
        chosen = [x for x in nc if x[6]]
        out.append(
            f"{k}. **MTL^struct fits not converged** ({len(nc)} of "
            f"{sum(len(r['grid']) for run in runs for r in run['rows'] if r['solver'] == 'mtl')} fits; "
            f"{len(chosen)} of them chosen by validation): "
            + "; ".join(
                f"fold {f} {key} C = {C:g} {st}, gap {g:.2g} ({rel:.1%} of the lower bound)"
                + (" [chosen]" if ch else "")
                for f, key, C, st, g, rel, ch in nc
            )
            + ". Their rows are models within that certified gap of the minimum, not the minimiser."
        )
    else:
        out.append(f"{k}. **MTL^struct**: every fit converged to its certified gap (or no MTL row).")
    return out


def _check_lines(runs, checks, summ, comps):
    """The section of a convergence check: records of some folds re-run with a longer MTL^struct time
    limit (``--check``): each chosen fit with its certificate, the verdict and the paired differences
    (``summ``, ``comps``: the group's :func:`summaries` and :func:`_comparisons`)."""
    s = checks[0]["settings"]
    out = [
        "",
        f"Fold(s) {', '.join(str(r['fold']) for r in checks)} "
        f"re-run for the kernels {', '.join(dict.fromkeys(r['key'] for run in checks for r in run['rows']))} with "
        f"C in {{{', '.join(f'{c:g}' for c in s['C'])}}} and {s['mtl_time_limit']:g} s per fit (records "
        + ", ".join(f"`{Path(r.get('path', '?')).name}`" for r in checks)
        + "; command(s) "
        + "; ".join(f"`{c}`" for c in dict.fromkeys(r["command"] for r in checks))
        + "):",
        "",
    ]
    out += _per_fold_rows(checks) + [""] + _verdicts(checks, summ)
    main = {(run["fold"], r["key"], r["solver"]): r for run in runs for r in run["rows"]}
    moved = []
    for run in checks:
        for r in run["rows"]:
            m = main.get((run["fold"], r["key"], r["solver"]))
            if m is not None:
                g, h = m["grid"][m["chosen"]], r["grid"][r["chosen"]]
                moved.append(
                    f"fold {run['fold']} {r['key']}: C = {g['C']:g} ({g['status']}) test {m['test']:.2%} "
                    f"-> C = {h['C']:g} ({h['status']}) test {r['test']:.2%}"
                )
    if moved:
        out += [
            "- Against the chosen fits of the tables above (same fold, kernel and solver): " + "; ".join(moved) + "."
        ]
    if comps:
        out += [""] + _paired_table(comps, summ)
    return out


def _check_summary(group_comps):
    """Each paired difference of the check blocks (their :func:`_comparisons`) pooled over their folds."""
    pooled = {}
    for comps in group_comps:
        for p, _ in comps:
            for f, d in zip(p.folds, p.diffs):
                pooled.setdefault((p.solver, p.a, p.b), {})[f] = d
    out = []
    for (solver, a, b), by_fold in pooled.items():
        if len(by_fold) > 1:
            d = np.array(list(by_fold.values()))
            out.append(
                f"- {run_name(solver)}, {a} - {b} over the {len(d)} checked folds "
                f"({', '.join(map(str, by_fold))}): {d.mean():+.2%} +- {d.std(ddof=1):.2%} (std), "
                f"the first ahead on {int(np.sum(d > 0))} of {len(d)}."
            )
    return ["", "Pooled over the blocks above:", ""] + out if out else []


def render_page(runs, out, command=None, checks=None) -> str:
    """Write the page of ``runs`` (records loaded by :func:`_ocr_folds.load_runs`) to ``out``; return its text.

    ``checks``: groups of records (each a list from :func:`_ocr_folds.load_runs`, same settings) of
    some folds re-run with a longer MTL^struct time limit, shown in a section of their own after
    the findings (their numbers do not enter the tables above)."""
    summ = summaries(runs)
    comps = _comparisons(runs, summ)
    n = runs[0]["test"]["chars"]
    se = np.sqrt(0.87 * 0.13 / max(n, 1))
    lines = [
        "# OCR chain model: single kernels, average kernel and MKL (SPOM Table 1, upper part)",
        "",
        f"Written by `python -m benchmarks.reproductions.ocr_chain_mkl` from the records of {len(runs)} run(s), one per fold ("
        + ", ".join(f"`{Path(r.get('path', '?')).name}`" for r in runs)
        + "), "
        + time.strftime("%Y-%m-%d %H:%M")
        + (f" (command: `{command}`)" if command else "")
        + ". Every number below comes from these records. Times are wall-clock on one core of a 2-core "
        "machine shared with other jobs (noisy).",
        "",
        "## Settings",
        "",
    ] + _settings(runs)
    lines += ["", "## Results over folds", ""] + _results(runs, summ)
    lines += [
        "",
        f"Target (SPOM Table 1: MKL {TARGET:.1%} per character, above each single kernel and the average):",
        "",
    ] + _verdicts(runs, summ)
    if comps:
        lines += [
            "",
            "Paired differences (test accuracy of the first minus the second, per fold on the same test "
            "characters, then over folds; the best single kernel is the one of highest mean over folds):",
            "",
        ] + _paired_table(comps, summ)
    lines += ["", "## Findings", ""] + _findings(runs, summ, comps)
    if checks:
        lines += [
            "",
            "## Convergence check: chosen fits re-run to their certified gap",
            "",
            "Many MTL^struct fits above stopped at their time limit; some were re-run with a longer one:",
        ]
        group_comps = []
        for group in checks:
            gsumm = summaries(group)
            group_comps.append(_comparisons(group, gsumm))
            lines += _check_lines(runs, group, gsumm, group_comps[-1])
        lines += _check_summary(group_comps)
    lines += ["", "## Per fold", "", "The chosen fit of every model, solver and fold:", ""] + _per_fold_rows(runs)
    lines += (
        [
            "",
            "Validation accuracy for every C, mean over folds (how often chosen; MTL fits that stopped "
            "before their certified gap):",
            "",
        ]
        + _grid_table(runs)
        + _spom_excess(runs)
    )
    lines += [
        "",
        "## Reading it",
        "",
        f"- Sampling error within a fold: an accuracy near 87% on {n} test characters has a standard error of "
        f"about {se:.2%} (binomial, ignoring the correlation of characters within a word); the paired "
        "standard errors above score both models on the same characters, which removes the characters' "
        "common difficulty. Over folds, the standard deviation also contains the variation of the training "
        "fold, so a mean difference within one standard deviation over a few folds is not established.",
        "- At the same C the MKL penalty 1/2 (sum_k ||w_k||)^2 lies between 1/2 ||w||^2 and m/2 ||w||^2 "
        "(m = 4 groups, Cauchy-Schwarz), so MKL is more strongly regularised than the average kernel at equal "
        "C; each model's C is therefore chosen separately, as SPOM did by cross-validation. pMKL (p > 1) "
        "lies between the two and does not select a single kernel.",
        f"- The Gaussian block is a Nystroem approximation with {runs[0]['settings']['n_components']} "
        "landmarks, not the exact Gaussian kernel of SPOM Table 1.",
        "",
    ]
    text = "\n".join(lines) + "\n"
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return text
