"""lossync: how much router buffer a high-speed bottleneck needs, how high-speed TCP variants share
it, and how much the synchronization of their losses changes the answer.

    >>> import lossync
    >>> result = lossync.run("examples/dumbbell-reno.toml")
    >>> result.summary["utilization"], result.series.head()
"""

from ._core import __version__ as __version__

# Public names and the modules that define them, imported on first use (PEP 562): `import lossync`
# stays light (no pandas or matplotlib until asked for), so the command line starts quickly and a
# Ctrl-C while it starts is handled by `lossync.__main__`.
_PUBLIC = {
    "InputFileError": "errors",
    "LossyncError": "errors",
    "LossyncWarning": "errors",
    "Result": "results",
    "calibrate": "calibration",
    "compare": "comparison",
    "ScenarioError": "errors",
    "default_scenario_path": "scenario",
    "estimate_wall_s": "engines",
    "load_results": "sweeps",
    "load_scenario": "scenario",
    "report": "reporting",
    "reproduce": "studies",
    "resolve": "scenario",
    "RunTimeout": "progress",
    "run": "engines",
    "size_buffer": "advisor",
    "summarize": "stats",
    "sweep": "sweeps",
    "variants": "scenario",
}
__all__ = sorted([*_PUBLIC, "__version__"])


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'lossync' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{_PUBLIC[name]}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
