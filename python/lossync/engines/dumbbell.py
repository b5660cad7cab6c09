"""What the engines outside the core (ns-3, the kernel) share: they run one bottleneck link, a
dumbbell, with persistent flows."""

from __future__ import annotations

from typing import Any

from ..errors import ScenarioError


def refuse_beyond_a_dumbbell(sc: dict[str, Any], engine: str) -> dict[str, Any]:
    """The resolved scenario's one link; ScenarioError naming the field for burst assembly,
    flows that come and go, a modelled reverse direction or more than one link."""
    links = sc["links"]
    for i, lk in enumerate(links):
        for obs_field in ("assembler", "burst_loss"):
            if lk.get(obs_field):
                raise ScenarioError(f"links[{i}].{obs_field}", "optical burst assembly runs in the packet and fluid engines only")
    for f in sc["flows"]:
        if f.get("arrivals"):
            raise ScenarioError(f"flows[{f['group']}].arrivals", "dynamic traffic runs in the packet engine only")
    if len(links) == 2 and links[1].get("reverse_of") == 0:
        raise ScenarioError("dumbbell.reverse", f"the {engine} engine models no queue on the way back (two-way traffic) in this version")
    if len(links) != 1:
        raise ScenarioError("links", f"the {engine} engine supports one bottleneck link (a dumbbell) in this version")
    return links[0]
