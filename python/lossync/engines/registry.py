"""The engine registry: every engine by name (the scenario's `engine`), with what it can run.

The core's engines (fluid, packet) come from the binding (`_core.engines()`); the Python engines
(ns3, kernel) declare theirs in their own folders as an `ENGINE` and are listed by one line in
engines/__init__.py. What an engine lacks a capability for is refused by one checker, the core's
(`_core.refuse_beyond`), in the same words for every engine; what an engine refuses for its own
reasons (a parameter it cannot translate, a memory bound) is its `check`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import _core
from ..errors import ScenarioError
from ..results import Result
from ..scenario import Prepared

#: (prepared scenario, progress, force, timeout_s) -> Result; with timeout_s (wall seconds, or
#: None) the run stops by then and returns the part simulated, marked partial
#: (`summary["partial"]`, a warning saying how far it got). The scenario was read and resolved
#: once, for this engine (`lossync.scenario.prepare`), and its capabilities checked.
EngineRun = Callable[[Prepared, "bool | None", bool, "float | None"], Result]
#: (prepared scenario, force): raises ScenarioError (or LossyncError) for what the engine cannot run.
EngineCheck = Callable[[Prepared, bool], None]
#: resolved scenario -> a rough wall time of its run in seconds, from the engine's typical speed.
EngineEstimate = Callable[[dict[str, Any]], float]


@dataclass(frozen=True)
class Engine:
    name: str
    about: str
    #: The fields of the core's `Capabilities` (crates/lossync-core/src/capabilities.rs):
    #: topology, two_way, queues, loss_models, dynamic_traffic, burst_assembly,
    #: wavelength_contention, max_burst, ecn (ECN-capable flows, CE marks and their echo;
    #: false when left out).
    capabilities: dict[str, Any]
    run: EngineRun
    #: Its own refusals, beyond its capabilities (those are checked for every engine).
    check: EngineCheck
    #: What a run will take, said before a long one starts (the bars then give the live figure).
    estimate: EngineEstimate


#: name -> Engine, in the order users see them; filled by engines/__init__.py.
ENGINES: dict[str, Engine] = {}


def lookup(name: Any) -> Engine:
    """The registered engine of that name; ScenarioError (field `engine`) naming the known ones."""
    if not isinstance(name, str) or name not in ENGINES:
        raise ScenarioError("engine", f"unknown engine {json.dumps(name)} (known: {', '.join(ENGINES)})")
    return ENGINES[name]


def refuse_beyond(sc: Prepared | dict[str, Any], name: str, capabilities: dict[str, Any] | None = None) -> None:
    """Refuses what engine `name` lacks a capability for in the scenario `sc` (the core's
    checker, naming the registered engines that have it). `capabilities`: the engine's on this
    machine, where they are less than it declares (the kernel engine on a kernel without a qdisc)."""
    registry = registry_json(name, capabilities)
    # A resolved dict (an engine's translation called on its own) is read by the core again.
    core = sc.core if isinstance(sc, Prepared) else _core.Scenario(json.dumps(sc), "json", ".")
    _core.refuse_beyond(core, name, registry)


def registry_json(name: str | None = None, capabilities: dict[str, Any] | None = None) -> str:
    """The registry as the core reads it (a JSON list as `_core.engines()` writes it); engine
    `name` with `capabilities` instead of those it declares, where given."""
    return json.dumps([{"name": e.name, "about": e.about,
                        "capabilities": capabilities if capabilities is not None and e.name == name else e.capabilities}
                       for e in ENGINES.values()])
