"""Progress bars, time estimates and wall-time limits for every long path (a run in any engine,
`compare`, `calibrate`, `size-buffer`, a sweep's points).

Bars are tqdm.auto's: a text bar on a terminal, a widget in a Jupyter notebook. By default they
show where someone is watching (stderr is a terminal, or the code runs in a notebook's kernel),
and only for work that lasts more than `BAR_DELAY_S`.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from .errors import LossyncError, ScenarioError

#: A bar appears only once its work has lasted this long: a fast run prints nothing extra.
BAR_DELAY_S = 0.5


class RunTimeout(LossyncError):
    """A wall-time limit (`timeout_s`, `--timeout`) ran out before anything could be measured
    (the run was still in its warm-up, or had not started)."""


def watched() -> bool:
    """Whether someone is watching: stderr is a terminal, or this runs in a Jupyter kernel."""
    if sys.stderr.isatty():
        return True
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def bar(total: float | None, desc: str, unit: str, enabled: bool | None = None, **kwargs: Any):
    """A tqdm.auto bar over `total` units (None: a count without an end), or None where progress
    is off (`enabled` None: when `watched`)."""
    if enabled is None:
        enabled = watched()
    if not enabled:
        return None
    from tqdm.auto import tqdm

    if total is not None and unit != "run":  # simulated seconds: 0.674, not 0.6739999999999999
        kwargs.setdefault("bar_format", "{l_bar}{bar}| {n:.4g}/{total:.4g} [{elapsed}<{remaining}, {rate_fmt}{postfix}]")
    return tqdm(total=total, desc=desc, unit=unit, leave=False, delay=BAR_DELAY_S, dynamic_ncols=True, **kwargs)


class Deadline:
    """A wall-time limit from its creation: `timeout_s` seconds, or none (None)."""

    def __init__(self, timeout_s: float | None, field: str = "timeout") -> None:
        # 0 is a limit already reached (what a caller passes on when its own ran out).
        if timeout_s is not None and not (isinstance(timeout_s, (int, float)) and math.isfinite(timeout_s) and timeout_s >= 0):
            raise ScenarioError(field, f"{timeout_s!r} is not a number of seconds (0 or more)")
        self.timeout_s = timeout_s
        self.started = time.monotonic()

    def remaining_s(self) -> float | None:
        """Seconds left (at least 0), or None without a limit."""
        if self.timeout_s is None:
            return None
        return max(0.0, self.timeout_s - (time.monotonic() - self.started))

    def expired(self) -> bool:
        return self.timeout_s is not None and time.monotonic() - self.started >= self.timeout_s

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


def stopped_warning(now_s: float, duration_s: float, wall_s: float, warmup_s: float = 0.0) -> str:
    """The warning of a run a wall-time limit stopped after `wall_s`: how far it got (and, stopped
    in the warm-up, that the metrics include it: the core measures from 0 then)."""
    early = f" (the {warmup_s:g} s warm-up had not ended: they include it)" if now_s < warmup_s else ""
    return (f"timeout: stopped by the wall-time limit after {wall_s:.3g} s at {now_s:.6g} s of {duration_s:g} s simulated; "
            f"every metric covers the part simulated only{early}")


def duration_text(seconds: float) -> str:
    """A wall time as people say it: `0.4 s`, `12 s`, `3 min 20 s`, `2 h 05 min`."""
    if not math.isfinite(seconds):
        return "unknown"
    if seconds < 10:
        return f"{seconds:.1g} s" if seconds < 1 else f"{seconds:.0f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        m, s = divmod(round(seconds), 60)
        return f"{m} min {s:02d} s"
    h, m = divmod(round(seconds / 60), 60)
    return f"{h} h {m:02d} min"


__all__ = ["BAR_DELAY_S", "Deadline", "RunTimeout", "bar", "duration_text", "stopped_warning", "watched"]
