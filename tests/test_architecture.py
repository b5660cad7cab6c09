"""The Python package's structure rules (docs/architecture.md), read from the source with `ast`:
no import cycle, counting imports inside functions (they hide cycles, they do not remove them);
every import goes down the layers; no module imports another module's private name."""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "lossync"

#: Layers, lowest first: a module may import its own layer or lower ones only.
LAYERS = [
    ["lossync._core", "lossync.errors", "lossync.io", "lossync.progress", "lossync.lazy"],
    ["lossync.scenario", "lossync.stats", "lossync.summary_text"],
    ["lossync.results", "lossync.plot", "lossync.htmlpage"],
    ["lossync.engines"],
    ["lossync.sweeps", "lossync.comparison", "lossync.compare_text", "lossync.calibration"],
    ["lossync.advisor", "lossync.studies", "lossync.reporting"],
    ["lossync.cli", "lossync.cli_args", "lossync.cli_results", "lossync", "lossync.__main__"],
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
MODULES["lossync._core"] = PACKAGE / "_core.pyi"


def layer(module: str) -> int:
    for i, names in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return i
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS (and to docs/architecture.md)")


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports(module: str) -> list[tuple[str, list[str], int]]:
    """(imported module, names, line) for every import of a lossync module in `module`, at any depth."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno) for a in node.names if a.name.split(".")[0] == "lossync"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "lossync":
                continue
            names = [a.name for a in node.names]
            # `from . import x` imports the module lossync.x when there is one.
            subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            found += [(s, [], node.lineno) for s in subs] or [(target, names, node.lineno)]
    return found


GRAPH = {m: sorted({t for t, _, _ in imports(m) if t != m}) for m in MODULES if m != "lossync._core"}


def test_every_module_is_in_a_layer():
    for m in MODULES:
        layer(m)


def test_no_import_cycle():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in GRAPH.get(m, []):
            if state.get(t) == 1:
                cycle = stack[stack.index(t):] + [t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in GRAPH:
        if m not in state:
            visit(m)


def test_imports_go_down_the_layers():
    bad = [f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)})" for m, targets in GRAPH.items() for t in targets
           if t in MODULES and layer(t) > layer(m)]
    assert not bad, "\n".join(bad)


def test_no_module_imports_another_modules_private_names():
    bad = [f"{MODULES[m].relative_to(PACKAGE.parent)}:{line} imports {n} from {t}"
           for m in GRAPH for t, names, line in imports(m) for n in names
           if n.startswith("_") and not n.startswith("__") and n != "_core"]
    assert not bad, "\n".join(bad)


def test_the_rules_see_a_cycle_hidden_in_a_function(tmp_path, monkeypatch):
    # The checker itself: a function-level import that closes a cycle is an edge.
    (tmp_path / "lossync").mkdir()
    (tmp_path / "lossync" / "__init__.py").write_text("")
    (tmp_path / "lossync" / "a.py").write_text("from .b import f\n")
    (tmp_path / "lossync" / "b.py").write_text("def f():\n    from .a import g\n")
    monkeypatch.setitem(MODULES, "lossync.a", tmp_path / "lossync" / "a.py")
    monkeypatch.setitem(MODULES, "lossync.b", tmp_path / "lossync" / "b.py")
    assert [t for t, _, _ in imports("lossync.a")] == ["lossync.b"]
    assert [t for t, _, _ in imports("lossync.b")] == ["lossync.a"]


#: The drivers of the engines outside the core build records for `_core.summarize`: raw counts,
#: never a ratio (only the metrics module divides by a span, an interval or a capacity).
DRIVER_RECORDS = [PACKAGE / "engines" / "ns3" / "__init__.py", PACKAGE / "engines" / "kernel" / "measure.py",
                  PACKAGE / "engines" / "records.py"]
DIVISORS = re.compile(r"span|interval|cap|^dt$")


def measurement_divisions(source: str) -> list[int]:
    """Lines of code (strings and comments aside) that divide by a name of a span, an interval or
    a capacity (`/ dt`, `/ (cap * dt)`, `/ span_s`)."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type not in (tokenize.COMMENT, tokenize.STRING, tokenize.NL, tokenize.NEWLINE)]
    lines = []
    for k, t in enumerate(tokens):
        if t.type == tokenize.OP and t.string == "/":
            following = tokens[k + 1:k + 4]
            names = [u.string for u in following if u.type == tokenize.NAME]
            if any(DIVISORS.search(n) for n in names[:1] or [""]) or (following and following[0].string == "(" and
                                                                         any(DIVISORS.search(n) for n in names)):
                lines.append(t.start[0])
    return lines


@pytest.mark.parametrize("path", DRIVER_RECORDS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_drivers_hand_over_counts_not_ratios(path):
    text = path.read_text()
    bad = [f"{path.name}:{i}: {text.splitlines()[i - 1].strip()}" for i in measurement_divisions(text)]
    assert not bad, "only the metrics module turns counts into rates:\n" + "\n".join(bad)


def test_the_ratio_rule_sees_a_division_by_an_interval_or_capacity():
    assert measurement_divisions("x = np.diff(a[:, 2], prepend=np.nan) / (cap * dt)\n")
    assert measurement_divisions("x = y / mss[near, i] / dt\n")
    assert measurement_divisions("x = y / span_s\n")
    assert not measurement_divisions("x = np.diff(qbytes[rows], prepend=np.nan) / frame\n")
    assert not measurement_divisions('"""utilization = departures / (capacity x time)"""\n')
