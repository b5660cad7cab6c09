"""lossync: how much router buffer a high-speed bottleneck needs, how high-speed TCP variants share
it, and how much the synchronization of their losses changes the answer.

    >>> import lossync
    >>> result = lossync.run("examples/dumbbell-reno.toml")
    >>> result.summary["utilization"], result.series.head()
"""

from ._core import __version__
from .engines import run
from .errors import InputFileError, LossyncError, ScenarioError
from .results import Result
from .scenario import default_scenario_path, load_scenario, resolve, variants
from .stats import summarize
from .sweep import load_results, sweep

__all__ = [
    "InputFileError",
    "LossyncError",
    "Result",
    "ScenarioError",
    "__version__",
    "default_scenario_path",
    "load_results",
    "load_scenario",
    "reproduce",
    "resolve",
    "run",
    "size_buffer",
    "summarize",
    "sweep",
    "variants",
]


def __getattr__(name: str):
    # The advisor and the studies load matplotlib; import them only when asked for (PEP 562).
    if name == "size_buffer":
        from .advisor import size_buffer

        return size_buffer
    if name == "reproduce":
        from .studies import reproduce

        return reproduce
    raise AttributeError(f"module 'lossync' has no attribute {name!r}")
