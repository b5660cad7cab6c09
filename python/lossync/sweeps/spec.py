"""Sweep files: a base scenario, axes over any scenario field, seeds per point (see the
package's docstring for the format)."""

from __future__ import annotations

import json
import math
from itertools import product
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import InputFileError, ScenarioError
from ..scenario import examples, find_scenario, read_document, shipped_example

#: The most runs one sweep may hold: its job list and result rows stay in memory (about 1 kB per
#: run), and a million runs is weeks of fluid runs on one machine; split larger studies.
MAX_RUNS = 1_000_000


class Range(BaseModel):
    """`{ from = a, to = b, num = n, scale = "linear" | "log" }`: n values from a to b inclusive."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    start: float = Field(alias="from")
    to: float
    num: int = Field(ge=1, le=MAX_RUNS)
    scale: Literal["linear", "log"] = "linear"

    @model_validator(mode="after")
    def _ends(self) -> Range:
        if not (math.isfinite(self.start) and math.isfinite(self.to)):
            raise ValueError("a range needs finite ends")
        if self.scale == "log" and (self.start <= 0 or self.to <= 0):
            raise ValueError(f"a log range needs positive ends, got from = {self.start:g}, to = {self.to:g}")
        return self

    def values(self) -> list[float]:
        """`num` values from `start` to `to`, both ends exactly as written (exp(log 0.01) is
        0.010000000000000004: a row that never equals the 0.01 the sweep file says)."""
        if self.num == 1:
            return [self.start]
        if self.scale == "log":
            if self.start <= 0 or self.to <= 0:
                raise ValueError("a log range needs positive ends")
            a, b = math.log(self.start), math.log(self.to)
            inner = [math.exp(a + (b - a) * k / (self.num - 1)) for k in range(1, self.num - 1)]
        else:
            inner = [self.start + (self.to - self.start) * k / (self.num - 1) for k in range(1, self.num - 1)]
        return [self.start, *inner, self.to]


class SweepSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: A scenario file relative to the sweep file, a shipped example's name, or a table.
    base: str | dict[str, Any]
    axes: dict[str, list[Any] | Range]
    mode: Literal["cross", "zip"] = "cross"
    seeds: int | list[int] = 1
    set: list[str] = []

    @field_validator("axes")
    @classmethod
    def _non_empty(cls, axes: dict[str, Any]) -> dict[str, Any]:
        for name, values in axes.items():
            if isinstance(values, list) and not values:
                raise ValueError(f"axis {name!r} has no values")
        return axes

    @field_validator("seeds", mode="before")
    @classmethod
    def _not_a_bool(cls, seeds: Any) -> Any:
        # Before pydantic reads true as 1: `seeds = true` is no count.
        if isinstance(seeds, bool) or (isinstance(seeds, list) and any(isinstance(s, bool) for s in seeds)):
            raise ValueError("seeds must be a count or a list of integers, not true or false")
        return seeds

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, seeds: int | list[int]) -> int | list[int]:
        if isinstance(seeds, int) and not 1 <= seeds <= MAX_RUNS:
            raise ValueError(f"seeds must be from 1 to {MAX_RUNS:,}, got {seeds}")
        if isinstance(seeds, list) and (not seeds or any(not 0 <= s < 2**64 for s in seeds)):
            raise ValueError("seeds must be a non-empty list of integers from 0 to 2^64 - 1")
        if isinstance(seeds, list) and len(set(seeds)) < len(seeds):
            raise ValueError(f"seeds lists {_repeated(seeds)} twice: one seed gives one run")
        return seeds

    @model_validator(mode="after")
    def _size(self) -> SweepSpec:
        runs = len(self.seed_list()) if isinstance(self.seeds, list) else self.seeds
        for values in self.axes.values():
            runs *= values.num if isinstance(values, Range) else len(values)
            if runs > MAX_RUNS and self.mode == "cross":
                raise ValueError(f"more than {MAX_RUNS:,} runs (points × seeds); split the sweep")
        return self

    def size(self) -> tuple[int, int]:
        """(points, seeds), counted without listing the points."""
        lengths = [v.num if isinstance(v, Range) else len(v) for v in self.axes.values()]
        points = min(lengths, default=1) if self.mode == "zip" else math.prod(lengths)
        return points, len(self.seed_list()) if isinstance(self.seeds, list) else self.seeds

    def seed_list(self) -> list[int]:
        return list(range(1, self.seeds + 1)) if isinstance(self.seeds, int) else list(self.seeds)

    def axis_values(self) -> dict[str, list[Any]]:
        return {k: (v.values() if isinstance(v, Range) else list(v)) for k, v in self.axes.items()}

    def points(self) -> list[dict[str, Any]]:
        axes = self.axis_values()
        names = list(axes)
        if self.mode == "zip":
            lengths = {len(v) for v in axes.values()}
            if len(lengths) > 1:
                raise ScenarioError("axes", f"mode = \"zip\" needs axes of equal length, got {sorted(lengths)}")
            return [dict(zip(names, vals)) for vals in zip(*axes.values())]
        return [dict(zip(names, vals)) for vals in product(*axes.values())]


def _no_point_twice(spec: SweepSpec) -> SweepSpec:
    """Refuses a point listed twice: one point run twice, whose rows would share a key, and a
    sweep that announces runs it never makes. Crossed, that is a value twice on one axis; zipped,
    the same values at two indices (one axis may repeat a value the others tell apart)."""
    axes = spec.axis_values()  # ranges too: from = 0.1, to = 0.1, num = 4 is one value four times
    if spec.mode == "cross":
        for name, values in axes.items():
            twice = _repeated(values)
            if twice is not None:
                raise ScenarioError("sweep.axes", f"axis {name!r} lists {twice} twice")
    elif len({len(v) for v in axes.values()}) == 1:
        twice = _repeated([dict(zip(axes, vals)) for vals in zip(*axes.values())])
        if twice is not None:
            raise ScenarioError("sweep.axes", f"mode = \"zip\" lists the point {twice} twice")
    return spec


def _repeated(values: list[Any]) -> str | None:
    """The first value `values` holds twice, as JSON writes it, or None. Values are compared by
    what they mean: 10 and 10.0 are one value, and so are "100Mbps" and "0.1Gbps" (read by the
    core's unit parser)."""
    seen = set()
    for v in values:
        text = json.dumps(_meaning(v), sort_keys=True, default=str)
        if text in seen:
            return json.dumps(v, sort_keys=True, default=str)
        seen.add(text)
    return None


def _meaning(value: Any) -> Any:
    """A swept value as what it means: numbers as floats, a quantity with its unit in the core's
    base unit, tables and lists value by value."""
    if isinstance(value, dict):
        return {k: _meaning(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_meaning(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        from .. import _core

        q = _core.quantity(value)
        return value if q is None else q
    return value


def load_sweep(path: str | Path) -> tuple[SweepSpec, Path]:
    """Reads a sweep file (or a shipped example by name); returns the spec and the folder
    relative names resolve against."""
    p = find_scenario(path)
    return parse_spec(read_document(p, "sweep")), p.resolve().parent


def base_path(base: str, folder: Path) -> Path:
    """Where a sweep's `base` is: a scenario file relative to the sweep file's folder (`folder`) if
    there is one, otherwise the shipped example of that name (`base = "dumbbell-reno"`, or
    `"paper-10g.toml"` in a shipped sweep copied elsewhere)."""
    p = folder / base
    if p.exists():
        return p
    shipped = shipped_example(base)
    if shipped is not None:
        return shipped
    known = ", ".join(n for n, _ in examples())
    raise InputFileError("sweep.base", f"{base!r}: no such scenario file in {folder}, nor a shipped example ({known})", str(p))


def parse_spec(doc: dict[str, Any] | SweepSpec) -> SweepSpec:
    if isinstance(doc, SweepSpec):
        return _no_point_twice(doc)
    try:
        return _no_point_twice(SweepSpec.model_validate(doc))
    except ValidationError as e:
        errors = e.errors()
        # A union (a list or a Range) reports each member's failure: the value error says why, and
        # for a table (not a list) the Range's own error does.
        ranges = [x for x in errors if any("Range" in str(part) for part in x["loc"])]
        err = next((x for x in errors if x["type"] == "value_error"), ranges[0] if ranges else errors[0])
        members = {"Range", "int", "str", "float"}
        where = ".".join(["sweep", *(str(x) for x in err["loc"] if not (str(x) in members or "[" in str(x)))])
        plain = {"missing": "missing, and it is required", "extra_forbidden": "unknown key",
                 "model_type": "give a list of values or a range table { from, to, num }"}
        raise ScenarioError(where, plain.get(err["type"], err["msg"].removeprefix("Value error, "))) from None


