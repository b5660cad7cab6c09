"""What of a resolved scenario the kernel engine can run, and how: `plan(sc, force) -> Plan`, or
ScenarioError naming the first field it cannot translate (one line, as the ns3 engine does).

Capacity has two limits. Above MAX_CAPACITY_BPS nothing is run: the delay box, one Python
thread copying every frame, cannot forward that many frames on any machine (docs/kernel.md).
Above `clean_limit_bps()` (measured on this machine, docs/kernel.md "Clean limit") a run
emulates its network badly (a late delay box, saturated cores) and is refused unless forced.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ... import _core
from ...errors import ScenarioError
from ..dumbbell import refuse_beyond_a_dumbbell

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
CUBIC_PARAMS = Path("/sys/module/tcp_cubic/parameters")
#: Our variant names that are Linux module names too (net/ipv4/tcp_*.c).
LINUX_NAMES = {"reno": "reno", "cubic": "cubic", "highspeed": "highspeed", "scalable": "scalable", "htcp": "htcp", "bic": "bic", "bbr": "bbr"}
MAX_FLOWS = 1000  # one address per flow in a /16 (netns.flow_address)
MAX_CAPACITY_BPS = 1e9  # the box's ceiling: ~80k full frames/s each way, far beyond one Python thread
#: Two cores, 10 flows of 40-80 ms, 1 BDP: the fastest capacity clean with room to spare (docs/kernel.md, "Clean limit").
CLEAN_LIMIT_2_CORES_BPS = 100e6
HEADER_BYTES = 52  # IPv4 20 + TCP 20 + timestamps 12: Linux's MSS is the MTU minus this
MIN_PACKET, MAX_PACKET = 576, 9000


@dataclass
class FlowPlan:
    cc: str  # the Linux congestion control's name
    rtt_s: float
    start_s: float
    initial_window: int
    slow_start: bool


@dataclass
class Plan:
    capacity_bps: float
    packet_size: int
    buffer_pkts: int
    flows: list[FlowPlan]


def available_variants() -> list[str]:
    try:
        return AVAILABLE.read_text().split()
    except OSError:
        return []


def _linux_cubic() -> dict[str, float | bool] | None:
    """The running kernel's CUBIC parameters (global module parameters, net/ipv4/tcp_cubic.c:
    beta and bic_scale in 1/1024; C = bic_scale * 10 / 1024)."""
    try:
        p = {f.name: int(f.read_text()) for f in CUBIC_PARAMS.iterdir() if f.name in ("beta", "bic_scale", "fast_convergence", "tcp_friendliness")}
    except (OSError, ValueError):
        return None
    return {"beta": p["beta"] / 1024, "c": p["bic_scale"] * 10 / 1024, "fast_convergence": bool(p["fast_convergence"]),
            "reno_friendly": bool(p["tcp_friendliness"])}


def _check_params(field: str, variant: str, params: dict) -> None:
    defaults = json.loads(_core.variant_defaults(variant))
    given = {**defaults, **(params or {})}
    # The kernel's laws have fixed constants (or global module parameters this engine does not
    # change): a parameter is accepted when it is what the kernel runs.
    kernel = {"reno": {"a": 1.0, "b": 0.5}, "cubic": _linux_cubic()}.get(variant) or defaults
    for name, value in given.items():
        k = kernel.get(name, defaults.get(name))
        same = value == k if isinstance(value, bool) or isinstance(k, bool) else abs(float(value) - float(k)) <= 2e-3 * max(1.0, abs(float(k)))
        if not same:
            raise ScenarioError(f"{field}.cc.{name}", f"{value!r}: the kernel runs {k!r} (its constants are fixed; the kernel engine changes no global module parameter)")


def clean_limit_bps(cores: int | None = None) -> float:
    """The capacity up to which this machine emulates cleanly. Measured on two cores; one core
    shares the delay box with every TCP stack and softirq, so it gets half; more cores do not
    raise it, because the delay box is one thread and its core is the limit."""
    cores = len(os.sched_getaffinity(0)) if cores is None else cores
    return CLEAN_LIMIT_2_CORES_BPS if cores >= 2 else CLEAN_LIMIT_2_CORES_BPS / 2


def plan(sc: dict, force: bool = False) -> Plan:
    """force: accept a capacity above the clean limit (the run then warns)."""
    link = refuse_beyond_a_dumbbell(sc, "kernel")
    if link["loss_rate"] > 0:
        raise ScenarioError("links[0].loss_rate", "the kernel engine has no random loss (no sch_netem in this kernel)")
    if link["capacity_bps"] > MAX_CAPACITY_BPS:
        raise ScenarioError("links[0].capacity", f"{link['capacity_bps']:g} bit/s: the kernel engine's delay box forwards at most {MAX_CAPACITY_BPS:g} bit/s, even with --force")
    if link["capacity_bps"] > clean_limit_bps() and not force:
        raise ScenarioError("links[0].capacity", f"{link['capacity_bps']:g} bit/s is above this machine's clean limit for the kernel engine "
                                                 f"({clean_limit_bps():g} bit/s on {len(os.sched_getaffinity(0))} cores, docs/kernel.md); --force runs it anyway")
    ps = link["packet_size_bytes"]
    if ps != round(ps) or not MIN_PACKET <= ps <= MAX_PACKET:
        raise ScenarioError("links[0].packet_size", f"the kernel engine needs a whole number of bytes in [{MIN_PACKET}, {MAX_PACKET}] (the MTU)")
    b = _core.whole_buffer_pkts(link["buffer_pkts"])  # as every packet-level engine rounds it
    flows = sc["flows"]
    if len(flows) > MAX_FLOWS:
        raise ScenarioError("flows", f"the kernel engine runs at most {MAX_FLOWS} flows")
    have = available_variants()
    out = []
    for i, f in enumerate(flows):
        field = f"flows[{f['group']}]"
        if f["logical"] != i:
            raise ScenarioError(f"{field}.parallel", "the kernel engine runs no parallel connections in this version")
        if f["rwnd_pkts"] is not None:
            raise ScenarioError(f"{field}.rwnd", "the kernel engine does not model receive-window caps")
        if f.get("pacing"):
            raise ScenarioError(f"{field}.pacing", "the kernel engine has no pacing here (no sch_fq in this kernel)")
        if f.get("send_jitter_s"):
            raise ScenarioError(f"{field}.send_jitter", "the kernel engine does not model a per-packet send delay")
        if f.get("access_capacity_bps"):
            raise ScenarioError(f"{field}.access_capacity", "the kernel engine has no access links (the senders' veth is unlimited)")
        if f.get("delayed_ack"):
            raise ScenarioError(f"{field}.delayed_ack", "the kernel engine runs Linux's own delayed ACKs (quick-ACK heuristics); leave delayed_ack unset")
        linux = LINUX_NAMES.get(f["variant"])
        if linux is None or linux not in have:
            raise ScenarioError(f"{field}.cc", f"variant {f['variant']!r} is not in this kernel (available: {', '.join(v for v in LINUX_NAMES if v in have)})")
        _check_params(field, f["variant"], f.get("params") or {})
        iw = f["initial_window_pkts"]
        if iw != round(iw) or iw < 1:
            raise ScenarioError(f"{field}.initial_window", "the kernel engine needs a whole number of packets")
        out.append(FlowPlan(cc=linux, rtt_s=f["rtt_s"], start_s=f["start_s"], initial_window=int(iw), slow_start=bool(f["slow_start"])))
    return Plan(capacity_bps=link["capacity_bps"], packet_size=int(ps), buffer_pkts=b, flows=out)
