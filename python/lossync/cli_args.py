"""What every `lossync` command checks of its arguments: paths that are not empty, folders that
can be written."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import click

from .errors import ScenarioError
from .io import os_reason


class NonEmptyPath(click.Path):
    """click.Path that refuses an empty string: `--out ''` (an unset shell variable) would
    otherwise mean the current folder, and `SCENARIO ''` a confusing "is a directory"."""

    def convert(self, value, param, ctx):  # type: ignore[override]
        if isinstance(value, str) and value == "":
            self.fail("an empty path", param, ctx)
        return super().convert(value, param, ctx)


class Seconds(click.ParamType):
    """A positive, finite number of seconds: `nan`, `inf`, 0 and negatives are refused (click's
    FloatRange lets nan through, as every comparison with it is false)."""

    name = "seconds"

    def convert(self, value, param, ctx):  # type: ignore[override]
        try:
            s = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not (math.isfinite(s) and s > 0):
            self.fail(f"{value!r} is not a positive, finite number of seconds", param, ctx)
        return s


SECONDS = Seconds()


class SimTime(click.ParamType):
    """A positive, finite simulated time written as a scenario writes one: `600`, `600s`,
    `2min`, `500ms`, `1h` (docs/scenario.md, units); in seconds."""

    name = "time"

    def convert(self, value, param, ctx):  # type: ignore[override]
        if isinstance(value, (int, float)):
            s = float(value)
        else:
            from . import _core

            s = _core.time_s(str(value))
            if s is None:
                self.fail(f"{value!r} is not a time (e.g. 60, 60s, 2min, 500ms)", param, ctx)
        if not (math.isfinite(s) and s > 0):
            self.fail(f"{value!r} is not a positive, finite time", param, ctx)
        return s


SIM_TIME = SimTime()


def writable_dir(option: str, folder: Path) -> None:
    """Checks, without creating anything, that `folder` is or can become a writable folder: it,
    or its nearest existing parent, must be a writable directory."""
    probe = folder.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise ScenarioError(option, f"{probe} is not a folder")
    try:  # a real attempt: permission bits do not tell for root or for special file systems
        os.rmdir(tempfile.mkdtemp(prefix=".lossync-probe-", dir=probe))
    except OSError as e:
        why = f"cannot write into {probe} ({os_reason(e)})"
        raise ScenarioError(option, why if probe == folder.absolute() else f"cannot create {folder}: {why}") from None
