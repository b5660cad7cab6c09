"""What the engines outside the core (ns-3, the kernel) share: they run one bottleneck link, a
dumbbell, with persistent flows (their declared capabilities refuse the rest)."""

from __future__ import annotations

from typing import Any

from ..scenario import Prepared
from .registry import refuse_beyond

#: A dumbbell of persistent flows, one way, drop-tail (an engine adds the queues it has).
DUMBBELL_ONLY: dict[str, Any] = {
    "topology": "dumbbell", "two_way": False, "queues": ["droptail"], "loss_models": [],
    "dynamic_traffic": False, "burst_assembly": False, "wavelength_contention": False, "max_burst": False,
}


def refuse_beyond_a_dumbbell(sc: Prepared | dict[str, Any], engine: str) -> dict[str, Any]:
    """The resolved scenario's one link; ScenarioError naming the field for what the engine's
    capabilities lack (burst assembly, flows that come and go, a modelled reverse direction,
    more than one link, a queue discipline)."""
    refuse_beyond(sc, engine)
    return resolved_of(sc)["links"][0]


def resolved_of(sc: Prepared | dict[str, Any]) -> dict[str, Any]:
    """The resolved scenario as a dict, from a prepared one or a dict already resolved."""
    return sc.resolved if isinstance(sc, Prepared) else sc
