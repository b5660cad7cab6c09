"""lossync: how much router buffer a high-speed bottleneck needs, how high-speed TCP variants share
it, and how much the synchronization of their losses changes the answer.

    >>> import lossync
    >>> result = lossync.run("examples/dumbbell-reno.toml")
    >>> result.summary["utilization"], result.series.head()
"""

from ._core import __version__
from .errors import InputFileError, LossyncError, ScenarioError
from .run import Result, run
from .scenario import default_scenario_path, load_scenario, resolve, variants
from .sweep import load_results, summarize, sweep

__all__ = [
    "InputFileError",
    "LossyncError",
    "Result",
    "ScenarioError",
    "__version__",
    "default_scenario_path",
    "load_results",
    "load_scenario",
    "resolve",
    "run",
    "summarize",
    "sweep",
    "variants",
]
