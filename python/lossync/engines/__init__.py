"""Engines: `lossync.run(scenario) -> Result` on the engine the scenario names.

Each engine is a module with a function `(scenario, overrides, base_dir, progress, force) -> Result`,
registered in `ENGINES` by name. The fluid and packet engines live in the Rust core
(engines/core.py drives them); ns-3 is a C++ program built and run by engines/ns3/;
the kernel engine runs Linux TCP in network namespaces (engines/kernel/, root only).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..errors import ScenarioError
from ..results import Result
from ..scenario import ScenarioLike, in_user_terms, to_core
from .core import run_core


def _run_ns3(scenario: ScenarioLike, overrides, base_dir, progress, force) -> Result:
    from .ns3 import run_ns3  # the ns-3 engine imports subprocess machinery only when used

    return run_ns3(scenario, overrides, base_dir)


def _run_kernel(scenario: ScenarioLike, overrides, base_dir, progress, force) -> Result:
    from .kernel import run_kernel  # namespaces and subprocesses only when used

    return run_kernel(scenario, overrides, base_dir, force)


def _run_core(scenario: ScenarioLike, overrides, base_dir, progress, force) -> Result:
    text, base = to_core(scenario, overrides, base_dir)
    return run_core(text, base, progress)


EngineRun = Callable[[ScenarioLike, "list[str] | tuple[str, ...]", "str | Path | None", "bool | None", bool], Result]
ENGINES: dict[str, EngineRun] = {
    "fluid": _run_core,
    "packet": _run_core,
    "ns3": _run_ns3,
    "kernel": _run_kernel,
}


def run(
    scenario: ScenarioLike,
    overrides: list[str] | tuple[str, ...] = (),
    progress: bool | None = None,
    base_dir: str | Path | None = None,
    force: bool = False,
) -> Result:
    """Runs a scenario (a TOML file name or a dict) and returns its Result.

    overrides: `path.to.field=value` strings applied before validation.
    progress: show a progress bar; default: when stderr is a terminal.
    base_dir: where relative file names in a dict scenario resolve (default: the working directory).
    force: run a kernel-engine capacity above this machine's clean limit (docs/kernel.md; the
    summary warns); the other engines have no such limit.
    """
    text, _ = to_core(scenario, overrides, base_dir)
    doc = json.loads(text)
    engine = doc.get("engine")
    # An engine name the registry lacks goes to the core, which refuses it naming the field.
    runner = ENGINES.get(engine, _run_core) if isinstance(engine, str) else _run_core
    try:
        return runner(scenario, overrides, base_dir, progress, force)
    except ScenarioError as e:  # engines name resolved links; say what the user wrote
        raise in_user_terms(e, doc) from None


__all__ = ["ENGINES", "Result", "run"]
