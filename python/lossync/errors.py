"""lossync's exceptions. Every error a user can cause derives from `LossyncError`.

`ScenarioError` names the field at fault (`.field`, a dotted path such as
`dumbbell.buffer.bdp_fraction`, or the command-line option) and says why (`.reason`); it is also
a `ValueError`. `InputFileError` is a file that cannot be read (`.filename` is its path; `.field`
the scenario field that names it, or the path itself when nothing does) and is also an
`OSError`. The core raises these same classes, so `except lossync.ScenarioError` catches an
error found in Rust or in Python alike.

`LossyncWarning` is not an error: a run finished, but its numbers may be wrong (outside the
validated region, no congestion seen, ...). `lossync.run` emits one per `Result.warnings`,
`lossync.sweep` one per distinct warning of its rows, `lossync.compare` one per engine's warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from . import _core

LossyncError = _core.LossyncError


class ScenarioError(_core.ScenarioError, ValueError):
    """A scenario field, sweep field or command-line option is invalid."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason

    def __reduce__(self):  # pickled by process pools and Dask: rebuild from (field, reason)
        return type(self), (self.field, self.reason)


class InputFileError(_core.InputFileError, OSError):
    """A file the scenario or command names cannot be read."""

    def __init__(self, field: str, reason: str, filename: str | None = None) -> None:
        # OSError's own constructor would read a two-argument call as (errno, strerror).
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
        self.filename = field if filename is None else filename

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"

    def __reduce__(self):
        return type(self), (self.field, self.reason, self.filename)


class LossyncWarning(UserWarning):
    """Why a run's numbers may be wrong; emitted by `lossync.run`, `sweep` and `compare`, so that
    it is seen by a caller who never reads `Result.warnings` or a row's `warnings` (filter it as
    any warning category)."""


def emit_warnings(messages: Iterable[str], stacklevel: int = 1) -> None:
    """Emits each message as a LossyncWarning blamed on the line `stacklevel` frames above the
    caller (1: the line that called the caller)."""
    for message in messages:
        warnings.warn(message, LossyncWarning, stacklevel=stacklevel + 2)


__all__ = ["InputFileError", "LossyncError", "LossyncWarning", "ScenarioError", "emit_warnings"]
