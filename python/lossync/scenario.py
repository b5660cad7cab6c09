"""Scenarios in Python: load TOML files, build them as dicts, override fields by dotted path.

A scenario crosses into the Rust core as JSON text; the core validates it and names the field of
any error. Field by field documentation: docs/scenario.md.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from copy import deepcopy
from importlib import resources
from pathlib import Path
from typing import Any

from . import _core
from .errors import InputFileError, ScenarioError
from .io import os_reason

ScenarioLike = str | Path | Mapping[str, Any]


#: SI steps for rates in words, largest first.
_RATE_STEPS = [(1e12, "Tb/s"), (1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")]


def rate_text(bps: float) -> str:
    """A rate in bits per second in its natural unit, as iperf prints it: `10 Gb/s`, `100 Mb/s`,
    `2.5 Gb/s`, `155.52 Mb/s`, `9600 b/s` (at most 6 significant digits)."""
    if not math.isfinite(bps):
        return f"{bps} b/s"
    for scale, unit in _RATE_STEPS:
        if abs(bps) >= scale:
            return f"{bps / scale:.6g} {unit}"
    return f"{bps:.6g} b/s"


def default_scenario_path() -> Path:
    """The shipped default: the paper's 10 Gbps, 10-flow HSTCP case."""
    return Path(str(resources.files("lossync") / "scenarios" / "default.toml"))


def examples_dir() -> Path:
    """The shipped example scenarios and sweeps (installed with the package)."""
    return Path(str(resources.files("lossync") / "examples"))


def examples() -> list[tuple[str, str]]:
    """The shipped examples: (name, the first sentence of their opening comment, shortened)."""
    found = []
    for p in sorted(examples_dir().glob("*.toml")):
        lines = p.read_text(encoding="utf-8").splitlines()
        comment = " ".join(line.lstrip("# ").strip() for line in itertools.takewhile(lambda x: x.startswith("#"), lines))
        # The first line alone stopped mid-sentence ("each behind its own"): the first sentence,
        # or its first 100 characters and an ellipsis.
        first = re.split(r"(?<!Fig)\.\s+(?=[A-Z])", comment, maxsplit=1)[0].rstrip(".") + "."
        found.append((p.stem, first if len(first) <= 100 else first[:100].rsplit(" ", 1)[0] + " …"))
    return found


def shipped_example(name: str) -> Path | None:
    """The shipped example called `name` (`paper-10g` or `paper-10g.toml`), or None."""
    if not name or Path(name).name != name:
        return None
    shipped = examples_dir() / (name if Path(name).suffix == ".toml" else f"{name}.toml")
    return shipped if shipped.is_file() else None


def copy_example(name: str, folder: str | Path = ".") -> list[Path]:
    """Copies the shipped example `name` into `folder` (created if missing), with the data files
    it names (`empirical-sync` reads `m-distribution.csv`), so that the copy runs as it is. A
    sweep's `base` names a shipped example and is found without a copy. Nothing is overwritten:
    if any file to be written exists, nothing is written and InputFileError names it.
    Returns the paths written."""
    source = shipped_example(name)
    if source is None:
        raise ScenarioError("--copy", f"{name!r} is not a shipped example (known: {', '.join(n for n, _ in examples())})")
    sources = [source, *_data_files(read_document(source, "scenario"))]
    folder = Path(folder)
    targets = [folder / s.name for s in sources]
    for t in targets:
        if t.exists() or t.is_symlink():
            raise InputFileError(str(t), "exists; not overwritten (remove it, or copy into another folder)")
    folder.mkdir(parents=True, exist_ok=True)
    for s, t in zip(sources, targets):
        try:
            with open(t, "xb") as f:  # exclusive: a file that appeared since the check is not overwritten
                f.write(s.read_bytes())
        except FileExistsError:
            raise InputFileError(str(t), "exists; not overwritten (remove it, or copy into another folder)") from None
    return targets


def _data_files(doc: Any) -> list[Path]:
    """The shipped files other than scenarios that a shipped document names by a string value."""
    found: list[Path] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str) and v and Path(v).name == v and Path(v).suffix != ".toml":
            p = examples_dir() / v
            if p.is_file() and p not in found:
                found.append(p)

    walk(doc)
    return found


def find_scenario(path: str | Path) -> Path:
    """`path` if it exists; otherwise a shipped example of that name (`paper-10g` or
    `paper-10g.toml`), so `lossync run paper-10g` works from any folder."""
    p = Path(path)
    if p.exists() or p.parent != Path("."):
        return p
    shipped = examples_dir() / (p.name if p.suffix == ".toml" else f"{p.name}.toml")
    return shipped if shipped.is_file() else p


def load_scenario(path: str | Path) -> dict[str, Any]:
    """Reads a TOML scenario file (or a shipped example by name) into a dict."""
    return read_document(find_scenario(path), "scenario")


#: Nesting deeper than any scenario has (a scenario is at most a table of lists of tables of
#: tables); deeper input is refused instead of exhausting the recursion limit.
MAX_DEPTH = 32


#: The largest input file read: far above any scenario, sweep or distribution (the largest shipped
#: example is a few kB; 100,000 explicit flows are a few MB), far below what exhausts memory.
MAX_INPUT_BYTES = 64 << 20


def read_text_file(p: Path, kind: str) -> str:
    """A regular file of at most MAX_INPUT_BYTES as UTF-8 text; anything else (a device such as
    /dev/zero, a pipe, a folder, a huge file) is one error naming the file, before any of it is read."""
    try:
        # O_NONBLOCK: opening a pipe with no writer would otherwise wait for one forever.
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        hint = f" (nor a shipped example: {', '.join(n for n, _ in examples())})" if p.parent == Path(".") else ""
        raise InputFileError(str(p), f"no such {kind} file{hint}") from None
    except OSError as e:
        raise InputFileError(str(p), f"cannot read: {os_reason(e)}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputFileError(str(p), f"a folder, not a {kind} file")
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(str(p), f"not a regular file (a {kind} file is a text file)")
        if st.st_size > MAX_INPUT_BYTES:
            raise InputFileError(str(p), f"{st.st_size} bytes, more than the {MAX_INPUT_BYTES >> 20} MiB a {kind} file may have")
        try:
            data = f.read(MAX_INPUT_BYTES + 1)
        except OSError as e:
            raise InputFileError(str(p), f"cannot read: {os_reason(e)}") from None
    if len(data) > MAX_INPUT_BYTES:  # it grew while we read
        raise InputFileError(str(p), f"more than the {MAX_INPUT_BYTES >> 20} MiB a {kind} file may have")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(str(p), f"not a UTF-8 text file (a {kind} file is UTF-8 text)") from None


def _parse(parse: Callable[[str], Any], text: str, where: str) -> Any:
    """`parse(text)`, with nesting beyond the parser's recursion refused in one line naming `where`
    (the parsers recurse once per level: 3,000 nested brackets exhaust Python's stack)."""
    try:
        return parse(text)
    except RecursionError:
        raise ScenarioError(where, f"nested deeper than {MAX_DEPTH} levels") from None


def read_document(p: Path, kind: str) -> dict[str, Any]:
    """A file the user named (a `kind`: scenario or sweep file) as a dict: TOML, or JSON if its
    name ends in `.json` (the resolved scenario `lossync validate` prints is a scenario input too);
    whatever is wrong with it is one error naming the file."""
    text = read_text_file(p, kind)
    if p.suffix.lower() == ".json":
        try:
            doc = _parse(json.loads, text, str(p))
        except json.JSONDecodeError as e:
            raise ScenarioError(str(p), f"not JSON: {e}") from None
        if not isinstance(doc, dict):
            raise ScenarioError(str(p), f"a {kind} is a JSON object, not {type(doc).__name__}")
        return doc
    try:
        return _parse(tomllib.loads, text, str(p))
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(str(p), str(e)) from None


def _parse_value(text: str, where: str) -> Any:
    """A command-line value: a TOML value if it reads as one (numbers, booleans, lists, tables,
    quoted strings), otherwise the bare string (so `--set dumbbell.capacity=10Gbps` works)."""
    try:
        return _parse(tomllib.loads, f"v = {text}", where)["v"]
    except tomllib.TOMLDecodeError:
        return text


def set_path(doc: dict[str, Any], dotted: str, value: Any) -> None:
    """Sets `doc[a][b][0][c] = value` for `dotted = "a.b.0.c"`, creating tables on the way."""
    keys = dotted.split(".")
    node: Any = doc
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if isinstance(node, list):
            try:
                idx = int(key)
                if idx < 0:  # Python would count from the end: a silent edit of the wrong element
                    raise IndexError
                node[idx]
            except (ValueError, IndexError):
                raise ScenarioError(".".join(keys[: i + 1]), f"no list element {key!r}") from None
            if last:
                node[idx] = value
            else:
                node = node[idx]
        elif isinstance(node, dict):
            if last:
                node[key] = value
            else:
                node = node.setdefault(key, {})
        else:
            raise ScenarioError(".".join(keys[:i]), "is a value, not a table")


def apply_overrides(doc: dict[str, Any], overrides: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """Applies `path.to.field=value` overrides."""
    for item in overrides:
        if "=" not in item:
            raise ScenarioError(f"--set {item}", "expected path.to.field=value")
        path, text = item.split("=", 1)
        set_path(doc, path.strip(), _parse_value(text.strip(), f"--set {path.strip()}"))
    return doc


def _json_safe(v: Any, where: str = "", depth: int = 0) -> Any:
    """The scenario as plain JSON values: numpy numbers and arrays and tuples become numbers and
    lists; NaN and infinity are refused naming their field."""
    if depth > MAX_DEPTH:
        raise ScenarioError(where or "scenario", f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if hasattr(v, "tolist") and hasattr(v, "dtype"):  # numpy scalars and arrays
        v = v.tolist()
    if isinstance(v, float) and not math.isfinite(v):
        # JSON has no NaN or infinity, and no scenario field takes one: refused here, by path.
        raise ScenarioError(where or "scenario", f"{v} is not a finite number")
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, Mapping):
        return {str(k): _json_safe(x, f"{where}.{k}" if where else str(k), depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]
    raise ScenarioError(where or "scenario", f"{type(v).__name__} is not a scenario value (numbers, strings, booleans, lists, tables)")


def _document(
    scenario: ScenarioLike, overrides: list[str] | tuple[str, ...] = (), base_dir: str | Path | None = None
) -> tuple[dict[str, Any], str]:
    """The scenario document (overrides applied, plain JSON values) and the folder its relative
    file names resolve against: a file's folder; for a dict, `base_dir` (default: cwd)."""
    if isinstance(scenario, (str, Path)):
        doc = load_scenario(scenario)
        base = str(find_scenario(scenario).resolve().parent)
    elif isinstance(scenario, Mapping):
        doc = _json_safe(scenario)
        base = str(Path(base_dir).resolve() if base_dir is not None else Path.cwd())
    else:
        raise ScenarioError("scenario", f"expected a file name or a dict, got {type(scenario).__name__}")
    apply_overrides(doc, overrides)
    return _json_safe(doc), base


def to_core(
    scenario: ScenarioLike, overrides: list[str] | tuple[str, ...] = (), base_dir: str | Path | None = None
) -> tuple[str, str]:
    """Returns (JSON text, base directory for relative file names) for the core. Relative file
    names in a file resolve against its folder; in a dict, against `base_dir` (default: cwd)."""
    doc, base = _document(scenario, overrides, base_dir)
    return json.dumps(doc), base


class Prepared:
    """A scenario ready to run, made once per run by `prepare`: the document as the user wrote
    it (overrides applied; errors are said in its terms), the folder its file names resolve
    against, and the core's scenario (`_core.Scenario`), parsed, resolved and checked once, which
    the engine, the capability checker and the metrics all take."""

    def __init__(self, doc: dict[str, Any], base: str, core: Any) -> None:
        self.doc, self.base, self.core = doc, base, core
        self._resolved: dict[str, Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_resolved": None}  # the core's scenario carries it

    @property
    def resolved(self) -> dict[str, Any]:
        """The resolved scenario (every default filled in, every flow listed), as a dict."""
        if self._resolved is None:
            self._resolved = json.loads(self.core.json)
        return self._resolved

    @property
    def engine(self) -> str:
        return self.resolved["engine"]


def prepare(scenario: ScenarioLike | Prepared, overrides: list[str] | tuple[str, ...] = (), base_dir: str | Path | None = None,
            engine: str | None = None) -> Prepared:
    """Reads and resolves a scenario once (ScenarioError naming the field, in the user's terms).
    `engine`: resolve it for that engine instead of the one it names (an engine's own entry
    point, `run_ns3`). A Prepared already resolved for that engine, without overrides, is
    returned as it is."""
    if isinstance(scenario, Prepared):
        if not overrides and engine in (None, scenario.engine):
            return scenario
        doc, base = deepcopy(scenario.doc), scenario.base
        apply_overrides(doc, overrides)
    else:
        doc, base = _document(scenario, overrides, base_dir)
    if engine is not None:
        doc = {**doc, "engine": engine}
    if "axes" in doc and "base" in doc:  # the core would say only "unknown field `axes`"
        raise ScenarioError("axes", "this is a sweep file (a base and axes), not a scenario: run it with `lossync sweep FILE`")
    try:
        return Prepared(doc, base, _core.Scenario(json.dumps(doc), "json", base))
    except ScenarioError as e:
        raise in_user_terms(e, doc) from None


def resolve(scenario: ScenarioLike, overrides: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """Validates a scenario (and that the engine it names can run it) and returns it resolved:
    every default filled in, every flow listed."""
    return prepare(scenario, overrides).resolved


#: The links a `[dumbbell]` table becomes: the bottleneck, and its reverse direction if modelled.
_DUMBBELL_LINKS = {"links[0]": "dumbbell", "links[1]": "dumbbell.reverse"}


def in_user_terms(e: ScenarioError, doc: dict) -> ScenarioError:
    """An engine names links by their index in the resolved scenario (`links[0]`); a scenario
    written with a `[dumbbell]` table has no `links`: name the table the user wrote."""
    head, dot, rest = e.field.partition(".")
    if "dumbbell" not in doc or head not in _DUMBBELL_LINKS:
        return e
    return ScenarioError(_DUMBBELL_LINKS[head] + dot + rest, e.reason)


def variants() -> list[tuple[str, str]]:
    """The congestion-control variants: (name, description)."""
    return _core.variants()
