"""What of a resolved scenario the kernel engine can run, and how: `plan(sc, force) -> Plan`, or
ScenarioError naming the first field it cannot translate (one line, as the ns3 engine does).

Capacity has two limits. Above MAX_CAPACITY_BPS nothing is run: the delay box, one Python
thread copying every frame, cannot forward that many frames on any machine (docs/kernel.md).
Above `clean_limit_bps()` (measured on this machine, docs/kernel.md "Clean limit") a run
emulates its network badly (a late delay box, saturated cores) and is refused unless forced.

The queue: `droptail` is a pfifo of B packets; `red` is Linux's red qdisc (`red_plan`, tc-red(8)),
where the running kernel has one (`kernel_has_qdisc`: this machine's does not, CONFIG_NET_SCH_RED
is not set, and the refusal says so).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ... import _core
from ...errors import ScenarioError
from ...scenario import Prepared, rate_text
from ..dumbbell import DUMBBELL_ONLY, cubic_alpha_switch, refuse_beyond_a_dumbbell, resolved_of
from ..registry import refuse_beyond
from .netns import ETH_HEADER_BYTES

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

#: The AQMs missing from this machine's kernel itself (no sch_codel, sch_pie, sch_fq_codel or
#: sch_dualpi2 module): refused by the capability checker, saying so.
NO_QDISC = {name: f"this machine's kernel has no {name} qdisc" for name in ("codel", "pie", "fq_codel", "dualpi2")}
#: What the engine runs where the kernel has the qdisc: drop-tail (pfifo) and RED (red), with ECN.
CAPABILITIES: dict[str, Any] = {**DUMBBELL_ONLY, "queues": ["droptail", "red"], "ecn": True, "missing_queues": NO_QDISC}
#: Our disciplines that are a Linux qdisc the running kernel may lack, and its kernel option.
KERNEL_QDISCS = {"red": "CONFIG_NET_SCH_RED"}
#: Arguments with which tc accepts each qdisc (its defaults do the rest), for the probe.
_PROBE_ARGS = {"red": ["limit", "400000", "avpkt", "1000", "bandwidth", "10mbit"]}
#: A RED weight is run when the kernel's 2^-Wlog is within this of it: Floyd's 0.002 and 0.001
#: are within 2.4% of 2^-9 and 2^-10; the next power of two is a factor 2 away.
WEIGHT_TOLERANCE = 0.03
#: The largest probability tc sends as itself: it sends probability * 2^32 as a u32 (q_red.c),
#: so 1.0 overflows to 0 and the kernel falls back to a power of two (red_set_parms).
MAX_P_LIMIT = (2**32 - 1) / 2**32


@dataclass
class FlowPlan:
    cc: str  # the Linux congestion control's name
    rtt_s: float
    start_s: float
    initial_window: int
    slow_start: bool
    ecn: bool = False  # ECN-capable (RFC 3168): net.ipv4.tcp_ecn = 1, or the route's `features ecn`
    hystart: bool = False  # the scenario asks CUBIC's HyStart (`hystart = "linux"`)
    alpha_switch: bool = False  # the scenario's CUBIC raises its Reno-friendly slope to 1 (RFC 9438 §4.3)


@dataclass
class RedPlan:
    """Linux's red qdisc for a scenario's `red` (tc-red(8)); sizes in bytes of frames as the qdisc
    counts them (packet_size + 14). `wlog`: the scenario's weight is 2^-wlog, which tc derives
    from `burst` (tc/tc_red.c); the run checks that the kernel got it (`tc -d qdisc show`)."""

    limit: int
    min: int
    max: int
    avpkt: int
    burst: int
    probability: float
    bandwidth_bps: int
    ecn: bool
    wlog: int

    def tc_args(self) -> list[str]:
        return ["red", "limit", str(self.limit), "min", str(self.min), "max", str(self.max), "avpkt", str(self.avpkt),
                "burst", str(self.burst), "probability", repr(self.probability), "bandwidth", f"{self.bandwidth_bps}bit",
                *(["ecn"] if self.ecn else [])]


@dataclass
class Plan:
    capacity_bps: float
    packet_size: int
    buffer_pkts: int
    flows: list[FlowPlan]
    red: RedPlan | None = None  # None: a pfifo of buffer_pkts (drop-tail)
    leaf: list[str] = field(default_factory=list)  # the bottleneck's qdisc, as tc's arguments after its handle


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


# Parameters the kernel's law has no knob for and whose default differs from it: run as the
# kernel runs them, with a warning (kernel engine, `run`), since refusing them would refuse the
# variant's defaults. CUBIC's slope switch (RFC 9438 §4.3) is not in tcp_cubic.c, which keeps
# 3(1 - beta)/(1 + beta) (tcp_friendliness, Linux 6.x).
WARNED_PARAMS = {"cubic": ("alpha_switch",)}


def _check_params(field: str, variant: str, params: dict) -> None:
    defaults = json.loads(_core.variant_defaults(variant))
    given = {**defaults, **(params or {})}
    # The kernel's laws have fixed constants (or global module parameters this engine does not
    # change): a parameter is accepted when it is what the kernel runs.
    kernel = {"reno": {"a": 1.0, "b": 0.5}, "cubic": _linux_cubic()}.get(variant) or defaults
    for name, value in given.items():
        if name in WARNED_PARAMS.get(variant, ()):
            continue
        k = kernel.get(name, defaults.get(name))
        same = value == k if isinstance(value, bool) or isinstance(k, bool) else abs(float(value) - float(k)) <= 2e-3 * max(1.0, abs(float(k)))
        if not same:
            raise ScenarioError(f"{field}.cc.{name}", f"{value!r}: the kernel runs {k!r} (its constants are fixed; the kernel engine changes no global module parameter)")


def tc_red_eval_ewma(qmin: int, burst: int, avpkt: int) -> int:
    """iproute2's tc_red_eval_ewma (tc/tc_red.c): the Wlog tc derives from `burst`, the smallest
    with burst + 1 - qmin/avpkt <= (1 - (1 - W)^burst) / W, W = 2^-Wlog; -1 where it finds none
    (burst too small, or none below 32)."""
    a = burst + 1 - qmin / avpkt
    if a < 1.0:
        return -1
    w = 0.5
    for wlog in range(1, 32):
        if a <= (1 - (1 - w) ** burst) / w:
            return wlog
        w /= 2
    return -1


def tc_red_eval_p(qmin: int, qmax: int, probability: float) -> int:
    """iproute2's tc_red_eval_P (tc/tc_red.c): Plog; -1 where tc fails ("failed to calculate
    probability")."""
    i = qmax - qmin
    if i <= 0:
        return -1
    p = probability / i
    for k in range(32):
        if p > 1.0:
            return k
        p *= 2
    return -1


def red_burst(qmin: int, avpkt: int, wlog: int) -> int | None:
    """The smallest `burst` (packets) for which tc sets this Wlog, or None: tc-red(8) has no
    weight parameter, only burst, from which tc derives Wlog (`tc_red_eval_ewma`), and Wlog
    does not fall as burst grows."""
    def key(b: int) -> int:
        got = tc_red_eval_ewma(qmin, b, avpkt)
        return got if got >= 0 or b + 1 - qmin / avpkt < 1.0 else 99  # -1 below: too small; above: too large

    lo, hi = 1, 2**32 - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if key(mid) >= wlog:
            hi = mid
        else:
            lo = mid + 1
    return lo if key(lo) == wlog else None


def red_plan(queue: dict, capacity_bps: float, packet_size: int, buffer_pkts: int) -> RedPlan:
    """The red qdisc for the scenario's `red` queue; ScenarioError naming the parameter Linux
    cannot run as given.

    - Sizes: Linux's RED averages the bytes in its child bfifo, which holds the waiting frames
      (packet_size + 14 bytes each): htb takes the packet it sends out of the qdisc, while the
      packet engine's queue counts the packet in service too. So min and max are the thresholds
      less that packet, `(min_th - 1)` and `(max_th - 1)` frames, as the ns3 engine moves them by
      its device queue; `limit` is the buffer, B frames, as the pfifo's B packets; avpkt a frame.
    - The weight: Linux's is 2^-Wlog, which tc derives from `burst` (tc-red(8): "burst ...
      determining how fast the average queue size is influenced by the real queue size"; the
      man page's guideline (min+min+max)/(3*avpkt) gives another weight): `burst` is chosen so
      that tc's own computation gives the Wlog of the scenario's weight, which must be a power
      of two within WEIGHT_TOLERANCE (the default 0.002 runs as 2^-9 = 0.00195).
    - probability = max_p (tc sends max_p * 2^32); `ecn` marks ECT packets instead of dropping
      them, above max too (no `harddrop`), as the packet engine's RED (RFC 3168 §7).
    - Linux's RED is not gentle (above max it marks or drops every packet, red_action in
      include/net/red.h): `gentle = true`, the packet engine's default, is refused.
    - bandwidth: the htb rate, so that an idle period decays the average by (1 - W)^(idle /
      packet time), as in the packet engine (Floyd & Jacobson 1993 §4)."""
    f = "links[0].queue"
    if queue.get("gentle"):
        raise ScenarioError(f"{f}.gentle", "Linux's red qdisc has no gentle mode (above max it marks or drops every packet, tc-red(8)): "
                                           "set gentle = false for the kernel engine")
    frame = packet_size + ETH_HEADER_BYTES
    min_th, max_th = float(queue["min_th"]), float(queue["max_th"])
    qmin, qmax = int(round((min_th - 1) * frame)), int(round((max_th - 1) * frame))
    weight = float(queue["weight"])
    wlog = int(round(-math.log2(weight)))
    if not 1 <= wlog <= 31 or abs(2.0**-wlog - weight) > WEIGHT_TOLERANCE * weight:
        near = ", ".join(f"2^-{k} = {2.0**-k:g}" for k in sorted({max(1, math.floor(-math.log2(weight))), min(31, math.ceil(-math.log2(weight)))}))
        raise ScenarioError(f"{f}.weight", f"{weight!r}: Linux's RED averages with a weight 2^-Wlog (tc-red(8), set through burst); "
                                           f"the nearest: {near}")
    # The kernel keeps qth << Wlog in 32 bits (red_check_params in include/net/red.h).
    if qmax.bit_length() + wlog >= 32:
        raise ScenarioError(f"{f}.max_th", f"{max_th:g} packets of {frame} bytes with the weight 2^-{wlog}: beyond the kernel's "
                                           "32-bit RED thresholds (red_check_params)")
    burst = red_burst(qmin, frame, wlog)
    if qmin < frame or burst is None:
        raise ScenarioError(f"{f}.min_th", f"{min_th:g}: Linux's RED needs min_th above 2 packets here (the packet in service is not "
                                           f"in its queue, and tc derives the weight 2^-{wlog} from burst and min, tc-red(8))")
    max_p = float(queue["max_p"])
    probability = min(max_p, MAX_P_LIMIT)
    if tc_red_eval_p(qmin, qmax, probability) < 0:
        raise ScenarioError(f"{f}.max_p", f"{max_p!r}: tc cannot run this probability with these thresholds (tc_red_eval_P: "
                                          "\"failed to calculate probability\"); it needs one above 0")
    rate = int(round(capacity_bps * frame / packet_size))  # the htb rate (netns.build)
    return RedPlan(limit=buffer_pkts * frame, min=qmin, max=qmax, avpkt=frame, burst=burst, probability=probability,
                   bandwidth_bps=rate, ecn=bool(queue.get("ecn")), wlog=wlog)


def _config_option(name: str) -> bool | None:
    """Whether the running kernel was built with a =y option, from /proc/config.gz (None: no
    config, or a module we cannot see is installed)."""
    try:
        lines = gzip.open("/proc/config.gz", "rt").read().splitlines()
    except OSError:
        return None
    if f"{name}=y" in lines:
        return True
    if f"# {name} is not set" in lines:
        return False
    return None


@cache
def kernel_has_qdisc(kind: str) -> bool | None:
    """Whether the running kernel runs qdisc `kind` (None: cannot tell). As root, tc adds one
    in a throwaway network namespace (`unshare --net`), which loads its module if there is
    one; otherwise the kernel's config says. `tc qdisc add ... red help` is no test: tc itself
    knows red whether the kernel does or not."""
    if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("tc"):
        r = subprocess.run(["unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", kind, *_PROBE_ARGS.get(kind, [])],
                           capture_output=True, text=True)
        if r.returncode == 0:
            return True
        if "qdisc kind is unknown" in r.stderr:
            return False
    return _config_option(KERNEL_QDISCS[kind]) if kind in KERNEL_QDISCS else None


def capabilities_here() -> dict[str, Any]:
    """CAPABILITIES less the qdiscs the running kernel lacks (each refused saying so)."""
    missing = {q: f"this machine's kernel has no {q} qdisc ({opt} is not set)" for q, opt in KERNEL_QDISCS.items()
               if kernel_has_qdisc(q) is False}
    return {**CAPABILITIES, "queues": [q for q in CAPABILITIES["queues"] if q not in missing],
            "missing_queues": {**CAPABILITIES["missing_queues"], **missing}}


def clean_limit_bps(cores: int | None = None) -> float:
    """The capacity up to which this machine emulates cleanly. Measured on two cores; one core
    shares the delay box with every TCP stack and softirq, so it gets half; more cores do not
    raise it, because the delay box is one thread and its core is the limit."""
    cores = len(os.sched_getaffinity(0)) if cores is None else cores
    return CLEAN_LIMIT_2_CORES_BPS if cores >= 2 else CLEAN_LIMIT_2_CORES_BPS / 2


def plan(scenario: Prepared | dict[str, Any], force: bool = False) -> Plan:
    """The run's plan for a prepared (or resolved) scenario; ScenarioError names any field the
    kernel engine cannot run. force: accept a capacity above the clean limit (the run then warns)."""
    link = refuse_beyond_a_dumbbell(scenario, "kernel")
    sc = resolved_of(scenario)
    if link["loss_rate"] > 0:
        raise ScenarioError("links[0].loss_rate", "the kernel engine has no random loss (no sch_netem in this kernel)")
    if link["capacity_bps"] > MAX_CAPACITY_BPS:
        raise ScenarioError("links[0].capacity", f"{rate_text(link['capacity_bps'])}: the kernel engine's delay box forwards at most {rate_text(MAX_CAPACITY_BPS)}, even with --force")
    if link["capacity_bps"] > clean_limit_bps() and not force:
        raise ScenarioError("links[0].capacity", f"{rate_text(link['capacity_bps'])} is above this machine's clean limit for the kernel engine "
                                                 f"({rate_text(clean_limit_bps())} on {len(os.sched_getaffinity(0))} cores, docs/kernel.md); --force runs it anyway")
    ps = link["packet_size_bytes"]
    if ps != round(ps) or not MIN_PACKET <= ps <= MAX_PACKET:
        raise ScenarioError("links[0].packet_size", f"the kernel engine needs a whole number of bytes in [{MIN_PACKET}, {MAX_PACKET}] (the MTU)")
    b = _core.whole_buffer_pkts(link["buffer_pkts"])  # as every packet-level engine rounds it
    queue = link["queue"]
    red = red_plan(queue, link["capacity_bps"], int(ps), b) if queue["discipline"] == "red" else None
    if queue["discipline"] in KERNEL_QDISCS:
        # The scenario's own faults first (above), then what this machine's kernel lacks, in the
        # capability checker's words.
        refuse_beyond(scenario, "kernel", capabilities_here())
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
        hystart = f.get("hystart", "off")
        if hystart == "rfc9406":
            raise ScenarioError(f"{field}.hystart", "Linux has no HyStart++ (RFC 9406); its CUBIC runs its own HyStart: hystart = \"linux\"")
        if hystart == "linux" and f["variant"] != "cubic":
            raise ScenarioError(f"{field}.hystart", "Linux runs HyStart in CUBIC only")
        linux = LINUX_NAMES.get(f["variant"])
        if linux is None or linux not in have:
            raise ScenarioError(f"{field}.cc", f"variant {f['variant']!r} is not in this kernel (available: {', '.join(v for v in LINUX_NAMES if v in have)})")
        _check_params(field, f["variant"], f.get("params") or {})
        iw = f["initial_window_pkts"]
        if iw != round(iw) or iw < 1:
            raise ScenarioError(f"{field}.initial_window", "the kernel engine needs a whole number of packets")
        out.append(FlowPlan(cc=linux, rtt_s=f["rtt_s"], start_s=f["start_s"], initial_window=int(iw), slow_start=bool(f["slow_start"]),
                            ecn=bool(f.get("ecn")), hystart=hystart == "linux",
                            alpha_switch=cubic_alpha_switch([f])))
    leaf = red.tc_args() if red is not None else ["pfifo", "limit", str(b)]
    return Plan(capacity_bps=link["capacity_bps"], packet_size=int(ps), buffer_pkts=b, flows=out, red=red, leaf=leaf)
