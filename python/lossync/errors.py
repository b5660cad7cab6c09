"""lossync's exceptions. Every error a user can cause derives from LossyncError."""

from ._core import InputFileError, LossyncError, ScenarioError

__all__ = ["InputFileError", "LossyncError", "ScenarioError"]
