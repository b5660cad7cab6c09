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


#: Linux's and ns-3's CUBIC keep the Reno-friendly slope 3(1 - beta)/(1 + beta); RFC 9438 §4.3
#: raises it to 1 once W_est reaches cwnd_prior (`alpha_switch`, lossync's default).
CUBIC_ALPHA_WARNING = ("{engine}: {cubic} keeps its Reno-friendly slope at 3(1 - beta)/(1 + beta), where the scenario's "
                       "CUBIC raises it to 1 once W_est reaches cwnd_prior (RFC 9438 §4.3); with cc.alpha_switch = false "
                       "every engine keeps it, as {cubic_short} does")


def cubic_alpha_switch(flows: list[dict[str, Any]]) -> bool:
    """Whether a resolved CUBIC flow group asks RFC 9438's slope switch, which Linux and ns-3 lack.
    The switch acts on the Reno-friendly region's slope: without that region it asks nothing."""
    def asks(params: dict[str, Any]) -> bool:
        return params.get("reno_friendly", True) and params.get("alpha_switch", True)

    return any(f["variant"] == "cubic" and asks(f.get("params") or {}) for f in flows)


def refuse_beyond_a_dumbbell(sc: Prepared | dict[str, Any], engine: str) -> dict[str, Any]:
    """The resolved scenario's one link; ScenarioError naming the field for what the engine's
    capabilities lack (burst assembly, flows that come and go, a modelled reverse direction,
    more than one link, a queue discipline)."""
    refuse_beyond(sc, engine)
    return resolved_of(sc)["links"][0]


def resolved_of(sc: Prepared | dict[str, Any]) -> dict[str, Any]:
    """The resolved scenario as a dict, from a prepared one or a dict already resolved."""
    return sc.resolved if isinstance(sc, Prepared) else sc
