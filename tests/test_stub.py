"""`_core.pyi`, the type stub of the binding, says exactly what the compiled `lossync._core`
offers: the same names, each function's and method's parameters with their defaults, and the same
properties. A binding changed without its stub fails here."""

import ast
import inspect
from pathlib import Path

import lossync._core as core

STUB = Path(__file__).resolve().parent.parent / "python" / "lossync" / "_core.pyi"


def _params(fn: ast.FunctionDef) -> list[tuple[str, str | None]]:
    a = fn.args
    defaults = [None] * (len(a.args) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
    return [(p.arg, None if d is None else repr(d)) for p, d in zip(a.args, defaults) if p.arg != "self"]


def _signature(obj) -> list[tuple[str, str | None]]:
    sig = inspect.signature(obj)
    return [(p.name, None if p.default is inspect.Parameter.empty else repr(p.default))
            for p in sig.parameters.values() if p.name not in ("self", "$self")]


def _stub():
    tree = ast.parse(STUB.read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    values = {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    return functions, classes, values


def test_the_stub_names_what_the_binding_offers():
    functions, classes, values = _stub()
    assert sorted(core.__all__) == sorted([*functions, *classes, *values])


def test_every_function_has_the_bindings_parameters():
    functions, _, _ = _stub()
    for name, fn in functions.items():
        assert _params(fn) == _signature(getattr(core, name)), name


def test_every_class_has_the_bindings_methods_and_properties():
    _, classes, _ = _stub()
    for name, cls in classes.items():
        bound = getattr(core, name)
        members = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
        offered = {n for n in vars(bound) if not n.startswith("_")}  # its own, not inherited
        assert sorted(n for n in members if not n.startswith("_")) == sorted(offered), name
        for member_name, fn in members.items():
            if member_name == "__init__":
                assert _params(fn) == _signature(bound), name
                continue
            member = inspect.getattr_static(bound, member_name)
            is_property = any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list)
            assert is_property == (type(member).__name__ == "getset_descriptor"), f"{name}.{member_name}"
            if not is_property:
                assert _params(fn) == _signature(getattr(bound, member_name)), f"{name}.{member_name}"
