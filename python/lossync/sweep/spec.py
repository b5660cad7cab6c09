"""Sweep files: a base scenario, axes over any scenario field, seeds per point (see the
package's docstring for the format)."""

from __future__ import annotations

import math
import tomllib
from itertools import product
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import InputFileError, ScenarioError


class Range(BaseModel):
    """`{ from = a, to = b, num = n, scale = "linear" | "log" }`: n values from a to b inclusive."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    start: float = Field(alias="from")
    to: float
    num: int = Field(ge=1)
    scale: Literal["linear", "log"] = "linear"

    def values(self) -> list[float]:
        if self.num == 1:
            return [self.start]
        if self.scale == "log":
            if self.start <= 0 or self.to <= 0:
                raise ValueError("a log range needs positive ends")
            a, b = math.log(self.start), math.log(self.to)
            return [math.exp(a + (b - a) * k / (self.num - 1)) for k in range(self.num)]
        return [self.start + (self.to - self.start) * k / (self.num - 1) for k in range(self.num)]


class SweepSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
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

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, seeds: int | list[int]) -> int | list[int]:
        if isinstance(seeds, int) and seeds < 1:
            raise ValueError("seeds must be at least 1")
        if isinstance(seeds, list) and (not seeds or any(s < 0 for s in seeds)):
            raise ValueError("seeds must be a non-empty list of non-negative integers")
        return seeds

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


def load_sweep(path: str | Path) -> tuple[SweepSpec, Path]:
    """Reads a sweep file; returns the spec and the folder relative names resolve against."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise InputFileError(str(p), "no such sweep file") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(str(p), str(e)) from None
    return parse_spec(doc), p.resolve().parent


def parse_spec(doc: dict[str, Any] | SweepSpec) -> SweepSpec:
    if isinstance(doc, SweepSpec):
        return doc
    try:
        return SweepSpec.model_validate(doc)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise ScenarioError(f"sweep.{where}", err["msg"]) from None


