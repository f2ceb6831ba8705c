"""The plain commands (no C given: ``--C auto``) on the real data, CRFsuite beside them (issue 21).

For each task of ``--tasks`` the script runs, as child processes (``python -m problems.cli``),
the command a new user would type, with no ``--C``, so that the default grid
(:data:`problems.template_learning.DEFAULT_C_GRIDS`) is trained as a certified path and C is
chosen on held-out data; then ``cutplane evaluate`` on the test file:

- ``conll2000``: ``cutplane train --task sequence --templates chunking --train train.txt.gz``
  (C chosen on the default 10% of the training sentences held out), test chunk F1 on
  ``test.txt.gz``;
- ``conll2002``: ``cutplane train --task sequence --templates ner134 --train esp.train.gz
  --dev esp.testa.gz`` (the dev file chooses C), test F1 on ``esp.testb.gz``;
- ``danish``: ``cutplane train --task parse --train da_ddt-ud-dev.conllu.gz`` (the built-in
  MSTParser-style templates, as ``benchmarks/reproductions/danish_parsing.py``; UD Danish's
  train split is absent, so dev is the training set), UAS on ``da_ddt-ud-test.conllu.gz``;
  then the same command at each single C of the grid the plain command used (``--C c --eps e``
  with ``e`` the certified tolerance of that C's point on the path), each trained on the whole
  training file, for the acceptance line "UAS within 0.5 of the best single C".

For the tagging tasks CRFsuite runs in the same run, on the same machine, on the same
template features and the same training file (``python -m benchmarks.crfsuite_reference
--train ... --test ... --templates ...``, a child process: L-BFGS, L2, ``c2 = 1``, CRFsuite's
defaults). Each child's wall seconds, CPU seconds (user + system) and peak resident memory are
measured by the script (:func:`os.wait4`). The time ratio is the wall time of the plain
``cutplane train`` (reading, features, the whole path, writing the model) over CRFsuite's
feature extraction plus training (``prepare_seconds + seconds`` of its record).

``--time-limit S`` is passed to every ``cutplane train`` (``--time-limit``: the whole path);
a run stopped by it reports ``time_limit`` in its status and path table, as the page shows.

The page ``--out`` (default ``docs/results/default_models.md``) is written by the script, its
command at the top; ``--json`` keeps the raw records and ``--render JSON`` rewrites the page
from them without running anything. ``--train / --dev / --test / --templates`` replace the
files of the one task given (the test runs the machinery on tiny generated files this way).

Usage
-----
``python -m benchmarks.default_models --tasks danish --time-limit 1200 --json docs/results/default_models.json``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._timing import fixed
from problems.cli.train import EXIT_UNCERTIFIED

ROOT = Path(__file__).resolve().parent.parent

#: Per task: kind, data folder, files, templates, the acceptance rule.
TASKS = {
    "conll2000": dict(
        kind="sequence",
        title="CoNLL-2000 chunking (CRF++ chunking templates)",
        folder="conll2000-chunking",
        train="train.txt.gz",
        dev=None,
        test="test.txt.gz",
        templates="chunking",
        metric="f1",
        threshold=93.5,
        lean=dict(time_ratio=1.0, rss_ratio=1.5, f1_at_least_crfsuite=True),
    ),
    "conll2002": dict(
        kind="sequence",
        title="CoNLL-2002 Spanish NER (ner134 templates, esp.testa chooses C)",
        folder="conll2002-ner-es",
        train="esp.train.gz",
        dev="esp.testa.gz",
        test="esp.testb.gz",
        templates="ner134",
        metric="f1",
        threshold=73.4,
        lean=dict(time_ratio=1.0, rss_ratio=1.5),
    ),
    "danish": dict(
        kind="parse",
        title="UD Danish-DDT dependency parsing (dev as training, test held out)",
        folder="ud-danish-ddt",
        train="da_ddt-ud-dev.conllu.gz",
        dev=None,
        test="da_ddt-ud-test.conllu.gz",
        templates=None,
        metric="uas",
        within=0.5,
        lean=dict(wall_s=133.0),
    ),
}

#: Keys of the ``cutplane train`` report kept in the JSON (the history and weights are left out).
REPORT_KEYS = (
    "C",
    "C_grid",
    "extended",
    "objective",
    "lower_bound",
    "gap",
    "eps",
    "status",
    "converged",
    "iterations",
    "time_s",
    "path_time_s",
    "total_time_s",
    "regularizer",
    "n_templates",
    "n_active_templates",
    "n_features",
    "n_sentences",
    "n_tokens",
    "validation",
    "path",
    "score_unit",
    "min_count",
    "executor",
    "workers",
)


def run_child(cmd, log_prefix):
    """Run ``cmd``; wall, CPU seconds (user + system) and peak RSS (MB) of that child alone.

    stdout and stderr go to ``log_prefix + ".out" / ".err"``; their last lines are kept.
    """
    out, err = Path(f"{log_prefix}.out"), Path(f"{log_prefix}.err")
    with open(out, "wb") as fo, open(err, "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    scale = 1024.0 if sys.platform != "darwin" else 1024.0 * 1024.0  # ru_maxrss: KiB on Linux, bytes on macOS
    return dict(
        command=" ".join(str(c) for c in cmd),
        returncode=proc.returncode,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        max_rss_mb=usage.ru_maxrss / scale,
        stdout_tail=out.read_text(errors="replace").splitlines()[-3:],
        stderr_tail=err.read_text(errors="replace").splitlines()[-5:],
    )


def _cli(*args):
    return [sys.executable, "-m", "problems.cli", *[str(a) for a in args]]


def _shown(cmd_args):
    """The command as a user types it: ``cutplane ...``, the data folder written ``$CUTPLANE_DATA``."""
    from problems.datasets import data_home

    home = data_home()
    root = str(home) if home is not None else "\0"
    return "cutplane " + " ".join(str(a).replace(root, "$CUTPLANE_DATA") for a in cmd_args)


def resolve_files(name, spec, args, single):
    """Training / dev / test files and templates of a task (``--train`` etc. override, one task only)."""
    from problems.datasets import dataset_path

    files = {}
    for key in ("train", "dev", "test"):
        given = getattr(args, key) if single else None
        if given is not None:
            files[key] = Path(given).resolve()
        elif spec[key] is not None:
            files[key] = dataset_path(spec["folder"], spec[key])
        else:
            files[key] = None
    templates = (args.templates if single else None) or spec["templates"]
    return files, templates


def train_and_evaluate(tag, kind, files, templates, extra, args, work):
    """``cutplane train`` (plain, or with ``extra`` options) then ``cutplane evaluate``: one record."""
    model, report, score = work / f"{tag}.npz", work / f"{tag}.report.json", work / f"{tag}.eval.json"
    train_args = ["train", "--task", kind]
    if templates is not None:
        train_args += ["--templates", templates]
    train_args += ["--train", files["train"]]
    if files.get("dev") is not None:
        train_args += ["--dev", files["dev"]]
    train_args += list(extra)
    if args.time_limit is not None:
        train_args += ["--time-limit", f"{args.time_limit:g}"]
    train = run_child(_cli(*train_args, "--model", model, "--report", report), work / f"{tag}.train")
    rec = dict(train_command=_shown(train_args), train=train)
    # EXIT_UNCERTIFIED: the model and report are written, the chosen point not certified (its
    # status is in the report and on the page); the plain command's model is still evaluated
    if train["returncode"] not in (0, EXIT_UNCERTIFIED):
        rec["error"] = "cutplane train failed: " + " | ".join(train["stderr_tail"])
        return rec
    full = json.loads(report.read_text())
    rec["report"] = {k: full.get(k) for k in REPORT_KEYS if k in full}
    ev = run_child(_cli("evaluate", "--model", model, "--test", files["test"], "--report", score), work / f"{tag}.eval")
    rec["evaluate_command"] = _shown(["evaluate", "--model", "M", "--test", files["test"]])
    rec["evaluate"] = ev
    if ev["returncode"] != 0:
        rec["error"] = "cutplane evaluate failed: " + " | ".join(ev["stderr_tail"])
        return rec
    rec["test"] = json.loads(score.read_text())
    return rec


def run_crfsuite(files, templates, work, tag):
    """CRFsuite (c2 = 1, its defaults) on the same features and training file, scored on the test file."""
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.crfsuite_reference",
        "--train",
        str(files["train"]),
        "--test",
        str(files["test"]),
        "--templates",
        templates,
        "--c2",
        "1.0",
    ]
    child = run_child(cmd, work / f"{tag}.crfsuite")
    out = dict(command="python " + _shown(cmd[1:])[len("cutplane ") :], process=child)
    if child["returncode"] != 0:
        out["error"] = "CRFsuite failed: " + " | ".join(child["stderr_tail"])
        return out
    record = json.loads(Path(f"{work / tag}.crfsuite.out").read_text().strip().splitlines()[-1])
    test = Path(files["test"]).name
    out.update(
        c2=record["c2"],
        f1=record.get(f"{test}_f1"),
        accuracy=record.get(f"{test}_accuracy"),
        seconds=record["seconds"],
        cpu_seconds=record["cpu_seconds"],
        prepare_seconds=record["prepare_seconds"],
        iterations=record["iterations"],
        n_features=record["n_features"],
        n_attributes=record["n_attributes"],
        pycrfsuite=record.get("pycrfsuite"),
    )
    return out


def run_task(name, args, work, single):
    spec = TASKS[name]
    files, templates = resolve_files(name, spec, args, single)
    rec = dict(
        task=name,
        title=spec["title"],
        kind=spec["kind"],
        metric=spec["metric"],
        templates=templates,
        files={
            k: None if v is None else (v.name if not single or getattr(args, k) is None else str(v))
            for k, v in files.items()
        },
        time_limit=args.time_limit,
    )
    print(f"[{name}] plain cutplane train ...", flush=True)
    rec["plain"] = train_and_evaluate(f"{name}.plain", spec["kind"], files, templates, (), args, work)
    plain = rec["plain"]
    if "test" in plain:
        rec["score"] = _score(plain["test"], spec["metric"])
        print(f"[{name}] {spec['metric']} {rec['score']:.2f}, {plain['train']['wall_s']:.1f} s", flush=True)
    if spec["kind"] == "sequence" and not args.no_crfsuite:
        print(f"[{name}] CRFsuite ...", flush=True)
        rec["crfsuite"] = run_crfsuite(files, templates, work, name)
        crf = rec["crfsuite"]
        if "error" not in crf and "error" not in plain:
            rec["time_ratio"] = plain["train"]["wall_s"] / (crf["prepare_seconds"] + crf["seconds"])
            rec["rss_ratio"] = plain["train"]["max_rss_mb"] / crf["process"]["max_rss_mb"]
    if spec["kind"] == "parse" and "report" in plain and not args.no_singles:
        path = plain["report"].get("path") or {}
        singles = []
        for C, eps in zip(path.get("C", []), path.get("eps", [])):
            print(f"[{name}] single C = {C:g} ...", flush=True)
            one = train_and_evaluate(
                f"{name}.C{C:g}", spec["kind"], files, templates, ("--C", f"{C:g}", "--eps", f"{eps:g}"), args, work
            )
            one["C"], one["eps"] = C, eps
            if "test" in one:
                one["score"] = _score(one["test"], spec["metric"])
            singles.append(one)
        rec["singles"] = singles
        scored = [s for s in singles if "score" in s]
        if scored:
            best = max(scored, key=lambda s: s["score"])
            rec["best_single"] = dict(C=best["C"], score=best["score"])
    rec["acceptance"] = _acceptance(rec, spec)
    rec["lean"] = _lean(rec, spec)
    return rec


def _percent(value, record):
    """A score of a ``cutplane`` JSON in percent: as it is where the JSON says ``"score_unit":
    "percent"`` (the CLI since issue 23), times 100 in older records (UAS and validation scores
    were fractions there)."""
    return float(value) if record.get("score_unit") == "percent" else 100.0 * float(value)


def _score(test, metric):
    """The task's figure in percent: chunk F1 (always percent) or UAS (:func:`_percent`)."""
    return float(test["f1"]) if metric == "f1" else _percent(test["uas"], test)


def _acceptance(rec, spec):
    if "score" not in rec:
        return dict(rule="the plain command failed", met=False)
    if "threshold" in spec:
        return dict(
            rule=f"test {spec['metric'].upper()} >= {spec['threshold']:g}", met=rec["score"] >= spec["threshold"]
        )
    if "best_single" in rec:
        delta = rec["score"] - rec["best_single"]["score"]
        return dict(
            rule=f"UAS within {spec['within']:g} of the best single C of the grid",
            delta=delta,
            met=delta >= -spec["within"],
        )
    return dict(rule=f"UAS within {spec['within']:g} of the best single C (single C runs not made)", met=None)


def _lean(rec, spec):
    """Issue 38's lines for the task (the plain command faster than CRFsuite, and lean): each
    ``(rule, met)`` with met None where the run lacks the figure (CRFsuite not run)."""
    want = spec.get("lean")
    if want is None or "score" not in rec:
        return None
    rep, lines = rec["plain"]["report"], []
    crf = rec.get("crfsuite")
    has_crf = crf is not None and "error" not in crf
    if "time_ratio" in want:
        lines.append(
            (
                f"wall <= {want['time_ratio']:g}x CRFsuite's",
                rec["time_ratio"] <= want["time_ratio"] if has_crf else None,
            )
        )
    if "rss_ratio" in want:
        lines.append(
            (
                f"peak RSS <= {want['rss_ratio']:g}x CRFsuite's",
                rec["rss_ratio"] <= want["rss_ratio"] if has_crf else None,
            )
        )
    if want.get("f1_at_least_crfsuite"):
        lines.append(("test F1 >= CRFsuite's", rec["score"] >= crf["f1"] if has_crf else None))
    if "threshold" in spec and not want.get("f1_at_least_crfsuite"):
        lines.append((f"test F1 >= {spec['threshold']:g}", rec["score"] >= spec["threshold"]))
    if "wall_s" in want:
        lines.append((f"wall <= {want['wall_s']:g} s", rec["plain"]["train"]["wall_s"] <= want["wall_s"]))
    if "within" in spec:
        lines.append((rec["acceptance"]["rule"], rec["acceptance"]["met"]))
    lines.append(("the chosen point certified (converged)", rep["status"] == "converged"))
    met = None if any(m is None for _, m in lines) else all(lines_met for _, lines_met in lines)
    return dict(lines=lines, met=met)


# --------------------------------------------------------------------------- page


def _s(x):
    if x is None:
        return "-"
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def _g(x):
    return "-" if x is None else f"{x:.3g}"


def _statuses(report):
    """The chosen point's status, and the path's when a point ended otherwise."""
    from collections import Counter

    counts = Counter(str(v) for v in (report.get("path") or {}).get("status", []))
    if set(counts) <= {report["status"]}:
        return report["status"]
    return f"{report['status']} (path: {', '.join(f'{n} {k}' for k, n in counts.items())})"


def _figure(rec):
    """The name of a tagging task's score: chunk F1, or entity F1 for NER (both conlleval's)."""
    return "test entity F1" if rec["task"] == "conll2002" else "test chunk F1"


def _yes(met):
    return "not checked" if met is None else ("**met**" if met else "**not met**")


_SOURCES = {"data": "the --dev file", "fraction": "a fraction of the training file held out"}


def _path_table(report, metric):
    path = report.get("path") or {}
    if not path.get("C"):
        return [f"One point: C = {report.get('C')}, status {report.get('status')}.", ""]
    val = "validation score (chunk F1 or token accuracy, percent)" if metric == "f1" else "validation UAS"
    out = [
        f"| C | {val} | objective F | lower bound | certified gap (eps) | status | iterations | seconds | active templates |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for i, C in enumerate(path["C"]):
        v = path["validation_score"][i]
        chosen = " (chosen)" if C == report.get("C") else ""
        out.append(
            f"| {C:g}{chosen} | {fixed(None if v is None else _percent(v, report))} | "
            f"{_g(path['objective'][i])} | {_g(path['lower_bound'][i])} | {_g(path['gap'][i])} "
            f"({_g(path['eps'][i])}) | {path['status'][i]} | {path['n_iter'][i]} | {_s(path['seconds'][i])} | "
            f"{path['n_active_templates'][i]} / {report.get('n_templates', '-')} |"
        )
    validation = report.get("validation") or {}
    source = _SOURCES.get(validation.get("source"), validation.get("source", "-"))
    if validation.get("refit"):
        kept = (
            f"the model kept was then trained again at the chosen C on all {validation.get('n_examples_refit')} "
            f"training examples (refit, {_s(validation.get('refit_seconds'))} s)."
        )
    elif validation.get("source") == "fraction":
        kept = "the model kept is the one at the chosen C, trained along the path (on the examples not held out)."
    else:
        kept = "the model kept is the one at the chosen C, trained along the path on the whole training file."
    out += [
        "",
        f"Validation: {validation.get('metric', '-')} on {validation.get('n_examples', '-')} held-out examples "
        f"({source}); {kept}",
        "",
    ]
    return out


def _child_line(label, child):
    return f"{label}: wall {_s(child['wall_s'])} s, CPU {_s(child['cpu_s'])} s, peak RSS {child['max_rss_mb']:.0f} MB"


def render_task(rec):
    out = [f"## {rec['task']}: {rec['title']}", ""]
    plain = rec["plain"]
    out += [f"Command: `{plain['train_command']}`", ""]
    if rec.get("time_limit") is not None:
        out += [f"Time limit of every `cutplane train`: {rec['time_limit']:g} s (`--time-limit`).", ""]
    if "error" in plain:
        out += [f"**Failed**: {plain['error']}", ""]
        return out
    rep, metric = plain["report"], rec["metric"]
    name = _figure(rec) if metric == "f1" else "test UAS (no punctuation)"
    acc = rec["acceptance"]
    out += [
        "| | ours (plain command) | CRFsuite (c2 = 1) |",
        "|---|---|---|",
    ]
    crf = rec.get("crfsuite")
    has_crf = crf is not None and "error" not in crf
    na = "not a tagging task" if rec["kind"] != "sequence" else ("failed" if crf else "not run")
    out.append(f"| {name} | {fixed(rec['score'])} | {fixed(crf['f1']) if has_crf else na} |")
    out.append(f"| chosen C | {rep['C']:g} (grid {', '.join(f'{c:g}' for c in rep.get('C_grid') or [rep['C']])}) | - |")
    out.append(
        f"| status of the chosen point | {rep['status']}, gap {_g(rep['gap'])} (eps {_g(rep['eps'])}), "
        f"{rep['iterations']} iterations | {str(crf['iterations']) + ' L-BFGS iterations' if has_crf else '-'} |"
    )
    out.append(
        f"| training wall s | {_s(plain['train']['wall_s'])} | "
        f"{_s(crf['prepare_seconds'] + crf['seconds']) + ' (features ' + _s(crf['prepare_seconds']) + ' + L-BFGS ' + _s(crf['seconds']) + ')' if has_crf else '-'} |"
    )
    out.append(
        f"| training CPU s | {_s(plain['train']['cpu_s'])} | {_s(crf['cpu_seconds']) + ' (L-BFGS only)' if has_crf else '-'} |"
    )
    out.append(
        f"| peak RSS MB (process) | {plain['train']['max_rss_mb']:.0f} | "
        f"{format(crf['process']['max_rss_mb'], '.0f') if has_crf else '-'} |"
    )
    if rep.get("executor") is not None:
        workers = f" x {rep['workers']}" if rep.get("workers") else ""
        out.append(f"| executor of the oracle | {rep['executor']}{workers} | one thread |")
    if rep.get("min_count") is not None and rec["kind"] == "sequence":
        out.append(f"| feature cutoff (min_count) | {rep['min_count']} | none (CRFsuite's default) |")
    if "time_ratio" in rec:
        out.append(f"| time ratio (ours / CRFsuite) | {rec['time_ratio']:.1f} | 1 |")
    if "rss_ratio" in rec:
        out.append(f"| peak RSS ratio (ours / CRFsuite) | {rec['rss_ratio']:.2f} | 1 |")
    out += ["", f"Acceptance ({acc['rule']}): {_yes(acc['met'])}."]
    if "delta" in acc:
        b = rec["best_single"]
        out[-1] = (
            f"Acceptance ({acc['rule']}): plain {fixed(rec['score'])} vs best single C = {b['C']:g}: "
            f"{fixed(b['score'])} (difference {acc['delta']:+.2f}): {_yes(acc['met'])}."
        )
    out += ["", "Path of the plain command:", ""]
    out += _path_table(rep, metric)
    out += [
        _child_line("`cutplane train`", plain["train"])
        + f"; `cutplane evaluate`: wall {_s(plain['evaluate']['wall_s'])} s.",
    ]
    if has_crf:
        out += ["", _child_line("CRFsuite process (reading, features, training, predicting)", crf["process"])]
        out += [
            "",
            f"CRFsuite: `{crf['command']}`; {crf['n_attributes']} attributes, "
            f"{crf['n_features']} features; python-crfsuite {crf.get('pycrfsuite')}.",
        ]
    if rec.get("singles"):
        out += [
            "",
            "Single C (the same command with `--C c --eps e`, e the tolerance of that point on the path; "
            "trained on the whole training file):",
            "",
            "| C | eps | test UAS | status | gap | iterations | wall s | CPU s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for s in rec["singles"]:
            if "error" in s:
                out.append(
                    f"| {s['C']:g} | {_g(s['eps'])} | failed | - | - | - | {_s(s['train']['wall_s'])} | "
                    f"{_s(s['train']['cpu_s'])} |"
                )
                continue
            r = s["report"]
            out.append(
                f"| {s['C']:g} | {_g(s['eps'])} | {fixed(s.get('score'))} | {r['status']} | {_g(r['gap'])} | "
                f"{r['iterations']} | {_s(s['train']['wall_s'])} | {_s(s['train']['cpu_s'])} |"
            )
    out.append("")
    return out


def render(data):
    """The markdown page of a JSON record of this script."""
    meta = data["meta"]
    out = [
        "# Good models out of the box: the plain commands, CRFsuite beside them (issue 21)",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Written by `benchmarks/default_models.py` (never by hand) on {meta['date']}; {meta['machine']}; "
        f"cutplane {meta['version']}; load average at the end {meta.get('load_average')}. All runs of a task were made one after the other in the same run "
        "on the same machine; wall and CPU times are of each child process (a shared machine: noisy).",
        "",
        "The plain command gives no C: `--C auto`, the regulariser's default grid (MTL^struct: 100, 1000, "
        "10000), trained as a certified path (each point to its own gap, 0.01 C by default) and C chosen "
        "on held-out data (`--dev`, or 10% of the training examples). CRFsuite: python-crfsuite, L-BFGS, "
        "L2 with c2 = 1 (its default), on the same template features and the same training file "
        "(`benchmarks/crfsuite_reference.py`). Time ratio: our `cutplane train` wall seconds over CRFsuite's "
        "feature extraction plus training. The plain command's other defaults: the oracle on threads over "
        "every usable core when there are several (`--executor`), and for the sequence tasks the feature "
        "cutoff `--min-count auto` (2 for MTL^struct; the rows say which were used).",
        "",
    ]
    out += ["| task | figure | ours | CRFsuite | chosen C | status | ours wall s | CRFsuite s | acceptance |"]
    out += ["|---|---|---|---|---|---|---|---|---|"]
    for rec in data["tasks"]:
        plain = rec["plain"]
        if "score" not in rec:
            out.append(f"| {rec['task']} | - | failed | - | - | - | - | - | {_yes(False)} |")
            continue
        crf = rec.get("crfsuite")
        has_crf = crf is not None and "error" not in crf
        fig = _figure(rec) if rec["metric"] == "f1" else "test UAS"
        out.append(
            f"| {rec['task']} | {fig} | {fixed(rec['score'])} | {fixed(crf['f1']) if has_crf else '-'} | "
            f"{plain['report']['C']:g} | {_statuses(plain['report'])} | {_s(plain['train']['wall_s'])} | "
            f"{_s(crf['prepare_seconds'] + crf['seconds']) if has_crf else '-'} | {_yes(rec['acceptance']['met'])} |"
        )
    out.append("")
    lean = [rec for rec in data["tasks"] if rec.get("lean")]
    if lean:
        out += [
            "Issue 38 (the plain command faster than CRFsuite, and lean): each line of its acceptance, from this run.",
            "",
            "| task | wall ratio (ours / CRFsuite) | peak RSS ratio | line: met? | all met |",
            "|---|---|---|---|---|",
        ]
        for rec in lean:
            lines = "; ".join(f"{rule}: {_yes(met)}" for rule, met in rec["lean"]["lines"])
            out.append(
                f"| {rec['task']} | {format(rec['time_ratio'], '.2f') if 'time_ratio' in rec else '-'} | "
                f"{format(rec['rss_ratio'], '.2f') if 'rss_ratio' in rec else '-'} | {lines} | "
                f"{_yes(rec['lean']['met'])} |"
            )
        out.append("")
    for rec in data["tasks"]:
        out += render_task(rec)
    return "\n".join(out)


# --------------------------------------------------------------------------- command line


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.default_models", description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", nargs="+", choices=sorted(TASKS), default=["conll2000", "conll2002", "danish"])
    ap.add_argument("--time-limit", type=float, default=None, help="seconds, passed to every cutplane train")
    ap.add_argument("--train", default=None, help="replace the training file of the one task given")
    ap.add_argument("--dev", default=None, help="replace (or add) the dev file of the one task given")
    ap.add_argument("--test", default=None, help="replace the test file of the one task given")
    ap.add_argument("--templates", default=None, help="replace the template set of the one task given")
    ap.add_argument("--no-crfsuite", action="store_true", help="skip CRFsuite")
    ap.add_argument("--no-singles", action="store_true", help="danish: skip the single-C runs")
    ap.add_argument("--work", default=None, help="keep models, reports and logs here (default: a temporary folder)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "default_models.md"))
    ap.add_argument("--json", default=None, help="also write the records as JSON")
    ap.add_argument("--no-write", action="store_true", help="print the page instead of writing it")
    ap.add_argument("--render", default=None, help="only rewrite the page --out from this script's --json file")
    args = ap.parse_args(argv)
    if args.render:
        page = render(json.loads(Path(args.render).read_text()))
        if args.no_write:
            print(page)
        else:
            Path(args.out).write_text(page + "\n")
            print(f"wrote {args.out}")
        return 0
    override = any(getattr(args, k) is not None for k in ("train", "dev", "test", "templates"))
    if override and len(args.tasks) != 1:
        ap.error("--train / --dev / --test / --templates replace the files of one task: give one --tasks")
    if args.time_limit is not None and args.time_limit <= 0:
        ap.error("--time-limit: a positive number of seconds")
    tmp = None
    if args.work is None:
        tmp = tempfile.TemporaryDirectory(prefix="default_models_")
        work = Path(tmp.name)
    else:
        work = Path(args.work).resolve()
        work.mkdir(parents=True, exist_ok=True)
    import cutplane

    def record(records):
        return dict(
            meta=dict(
                command="python -m benchmarks.default_models " + " ".join(sys.argv[1:] if argv is None else argv),
                date=time.strftime("%Y-%m-%d"),
                machine=f"{platform.machine()}, {platform.system()}, {os.cpu_count()} CPUs, "
                f"Python {platform.python_version()}",
                version=cutplane.__version__,
                load_average=[round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None,
            ),
            tasks=records,
        )

    records = []
    try:
        for name in args.tasks:
            records.append(run_task(name, args, work, override))
            if args.json:  # kept after every task: a long run stopped later loses only the task running
                Path(args.json).write_text(json.dumps(record(records), indent=1) + "\n")
    finally:
        if tmp is not None:
            tmp.cleanup()
    data = record(records)
    page = render(data)
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n")
    if args.no_write:
        print(page)
    else:
        Path(args.out).write_text(page + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
