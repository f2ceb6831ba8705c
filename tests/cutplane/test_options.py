"""The engine's options are declared once (cutplane.options.OPTIONS), and every consumer is made
from the declarations: minimize, the path, the CuttingPlane solver object and `cutplane train`."""

from __future__ import annotations

import ast
import contextlib
import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cutplane
from cutplane.exceptions import InputError
from cutplane.options import OPTIONS, check_options, defaults, option, option_names
from cutplane.path import regularization_path
from cutplane.regularizers import L2
from oracles.linear import BinaryHinge
from problems.cli.main import main
from problems.solvers import CuttingPlane

ROOT = Path(__file__).resolve().parents[2]
NAMES = [o.name for o in OPTIONS]


def _oracle():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    return BinaryHinge(X, np.where(X[:, 0] > 0, 1.0, -1.0))


def _method_of(opt):
    return "bmrm" if opt.methods is None else opt.methods[0]


def _help() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["train", "--help"]) == 0
    return out.getvalue()


def test_names_are_unique_and_documented():
    assert len(set(NAMES)) == len(NAMES)
    for opt in OPTIONS:
        assert opt.doc and "\n" not in opt.doc, opt.name
        assert option(opt.name) is opt


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.filterwarnings("ignore::cutplane.exceptions.ConvergenceWarning")  # max_iter=3 keeps it short
def test_every_option_is_accepted_by_minimize_and_the_path(name):
    opt = option(name)
    method = _method_of(opt)
    given = {name: opt.default, "max_iter": 3} if name != "max_iter" else {name: opt.default}
    if name != "method":
        given["method"] = method
    res = cutplane.minimize(_oracle(), L2(), 0.1, **given)
    assert res.method == method and res.n_iter >= 1
    given = {**given, "max_iter": 3}
    given.setdefault("eps", 1e-3)  # a keyword of the path: one gap for every point, or one per point
    path = regularization_path(_oracle(), L2(), [1.0, 0.1], **given)
    assert len(path.run_order) == 2


@pytest.mark.parametrize("name", NAMES)
def test_every_option_is_a_parameter_of_the_solver_object_and_a_flag_of_train(name):
    opt = option(name)
    assert opt.public_name in CuttingPlane().get_params()
    assert opt.flag in _help()


@pytest.mark.parametrize("name", [o.name for o in OPTIONS if not isinstance(o.default, bool)])
def test_every_flag_parses_a_valid_value(name):
    """Each flag of `cutplane train` takes a valid value written as text (its default's text, or
    a small integer or fraction for the options without a default), checked by the declaration."""
    import argparse

    from problems.command_options import add_engine_options

    opt = option(name)
    parser = argparse.ArgumentParser()
    add_engine_options(parser)
    texts = [str(opt.default)] if opt.default is not None else ["2", "0.5"]
    parsed = []
    for text in texts:
        try:
            parsed.append(getattr(parser.parse_args([opt.flag, text]), opt.public_name))
        except SystemExit:
            continue
    assert parsed, f"{opt.flag} parses none of {texts}"
    value = parsed[0]
    assert check_options({name: value}, method=_method_of(opt))[name] == value


def test_the_solver_object_passes_every_option_to_the_engine():
    kwargs = CuttingPlane(method="n-slack", planes=4, seed=3).checked(eps=0.1, max_iter=7).minimize_kwargs(10.0)
    assert kwargs["planes"] == 4 and kwargs["seed"] == 3 and kwargs["max_iter"] == 7
    assert kwargs["eps"] == pytest.approx(0.01)
    assert set(option_names("n-slack")) <= set(kwargs)
    for method in ("bmrm", "ls-bmrm"):  # the 1-slack methods' options too (cache_steps is kept apart)
        kwargs = CuttingPlane(method=method, cache_steps=5).checked(eps=0.1, max_iter=7).minimize_kwargs(10.0)
        assert set(option_names(method)) <= set(kwargs) and kwargs["cache_steps"] == 5


def test_an_option_of_another_method_is_refused_naming_it():
    with pytest.raises(InputError) as e:
        cutplane.minimize(_oracle(), L2(), 0.1, method="bmrm", planes=4)
    assert e.value.field == "planes"
    with pytest.raises(InputError) as e:
        cutplane.minimize(_oracle(), L2(), 0.1, method="n-slack", max_cuts=10)
    assert e.value.field == "max_cuts"
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_itr'"):
        cutplane.minimize(_oracle(), L2(), 0.1, max_itr=10)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from([o.name for o in OPTIONS if o.name not in ("method", "solver", "checkpoint")]))
def test_a_value_of_the_wrong_kind_is_refused_naming_the_option(name):
    with pytest.raises(InputError) as e:
        check_options({name: "nonsense"}, method=_method_of(option(name)))
    assert e.value.field == name


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(NAMES))
def test_defaults_pass_their_own_check(name):
    opt = option(name)
    checked = check_options({name: opt.default}, method=_method_of(opt))
    assert checked[name] == defaults()[name]


def _engine_option_params(node) -> set:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        names = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    else:  # a class: its annotated fields (a dataclass's signature)
        names = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    return names & (set(NAMES) | {o.public_name for o in OPTIONS})


def test_no_other_signature_lists_eight_engine_options():
    offenders = []
    for package in ("cutplane", "oracles", "problems"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found = _engine_option_params(node)
                    if len(found) >= 8:
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {sorted(found)}")
    assert not offenders, "\n".join(offenders)


def test_loop_functions_are_short_and_n_slack_is_a_registered_method():
    from cutplane.engine import METHODS

    assert set(METHODS) == {"bmrm", "ls-bmrm", "in-out", "kelley", "n-slack"}
    long = []
    for rel in ("cutplane/engine.py", "cutplane/nslack/loop.py", "cutplane/path.py", "cutplane/driver.py"):
        for node in ast.walk(ast.parse((ROOT / rel).read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 80:
                long.append(f"{rel}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert not long, "\n".join(long)
