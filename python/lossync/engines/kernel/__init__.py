"""The kernel engine: the scenario's dumbbell with real Linux TCP in network namespaces, as a
yardstick for the other engines. Needs root.

`run_kernel(scenario) -> Result` builds four namespaces (netns.py: senders, a delay box, a
router, receivers), runs one bulk TCP connection per flow with the flow's congestion control,
samples the senders' TCP_INFO and the bottleneck's tc counters, and hands the records to the
core's metrics (`_core.summarize`), the same code that summarizes every engine (measure.py says
which numbers are estimates). Everything it creates is removed when the run ends, fails, or is
interrupted (Ctrl-C, SIGTERM); `lossync kernel cleanup` removes what a killed run left.

What is modelled:
- The bottleneck: htb at the link's capacity (rate scaled so IP packets of packet_size bytes
  leave at exactly C) with a pfifo of B = round(buffer) packets under it; B counts waiting
  packets, htb holds none in service. Segmentation and receive offloads are off on every veth
  (offload.py), so one queued packet is one MTU-sized frame; the MTU is packet_size. A `red`
  queue is Linux's red qdisc there instead of the pfifo, where the kernel has one
  (translate.red_plan: tc-red(8)'s parameters, not gentle); its CE marks and early drops are
  read from its statistics.
- ECN (RFC 3168): a flow group's `ecn` is the senders' net.ipv4.tcp_ecn = 1 when every flow has
  it, else the route's `features ecn` for those that do; each connection's negotiation is
  checked (TCP_INFO), a mismatch is a warning.
- Base RTT per flow: this kernel has no sch_netem and no libnetfilter_queue, so a user-space
  delay box (delaybox.py, AF_PACKET) between the senders and the router holds each frame for
  half of (the flow's rtt minus the network's own RTT, measured first) in each direction.
  Before the run an ICMP probe (rttprobe.py) checks each RTT; a miss by more than 1 ms is a
  warning in the summary. The box runs in Python: at a few hundred Mb/s it adds jitter.
- TCP is Linux's: SACK, timestamps, window scaling, PRR whatever `recovery` says, RACK-TLP
  whatever `loss_detection` says, the undo of spurious timeouts whatever `undo` says, its own
  delayed ACKs (so the
  scenario's `delayed_ack` is refused), CUBIC with HyStart when the kernel enables it (a
  warning says so unless the scenario asks `hystart = "linux"`; HyStart++ is refused).
  Variants: those of ours this kernel has
  (/proc/sys/net/ipv4/tcp_available_congestion_control); a parameter is accepted only when it
  equals what the kernel runs. The initial window is the route's initcwnd (ip-route(8));
  `slow_start = false` is the route's locked ssthresh = the initial window, which Linux reads
  from a TCP metrics entry that a short connection per flow creates before the run.
- Refused with ScenarioError naming the field (translate.py): more than one link, two-way
  traffic, `arrivals`, burst assembly, `loss_rate`, a RED that Linux's cannot run (gentle, a
  weight off a power of two) or on a kernel without it, pacing, send jitter, access links,
  `rwnd`, parallel connections, capacities over 1 Gb/s, and capacities over this machine's
  clean limit unless forced (`force=True`, `lossync run --force`; the summary then warns).
- Health (health.py): every summary has a `health` block (RTT check, the delay box's lateness
  and stalls, CPU, drops outside the bottleneck); an unhealthy run says so in its warnings.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from itertools import count
from pathlib import Path

from ...errors import LossyncError
from ...lazy import numpy as np
from ...progress import Deadline, RunTimeout, stopped_warning
from ...progress import bar as progress_bar
from ...results import Result
from ...scenario import Prepared, ScenarioLike, prepare, rate_text
from ..dumbbell import CUBIC_ALPHA_WARNING
from ..registry import Engine
from . import health, netns
from .measure import measure
from .translate import CAPABILITIES, Plan, clean_limit_bps, plan

PORT = 5001
START_MARGIN_S = 0.5  # between starting the helpers and t = 0 of the run
QUEUE_INTERVAL_S = 0.02  # tc samples at most this far apart (a fork of tc each)
SENDER_INTERVAL_S = 0.01  # TCP_INFO samples at most this far apart: below any RTT we emulate
RTT_CORRECTION_S = 1e-4  # a residual above this is corrected once
MEASURE_MARGIN_S = 2.0  # after the traffic, a timed run keeps this long to stop and measure
_runs = count()


def require_root() -> None:
    if os.geteuid() != 0:
        raise LossyncError("engine kernel needs root (it creates network namespaces and tc queues): run lossync as root")
    for tool in ("ip", "tc", "sysctl"):
        if shutil.which(tool) is None:
            raise LossyncError(f"engine kernel needs the {tool!r} program (iproute2, procps)")


@contextmanager
def _sigterm_exits():
    """SIGTERM becomes SystemExit(143) in the main thread, so the run's clean-up runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_kernel(scenario: ScenarioLike | Prepared, overrides: list[str] | tuple[str, ...] = (), base_dir: str | Path | None = None,
               force: bool = False, timeout_s: float | None = None, progress: bool | None = False) -> Result:
    """Runs a dumbbell scenario (a TOML file name or a dict) with Linux TCP in network
    namespaces and returns its Result (`engine` = "kernel"); `result.rtt_check` maps each
    target RTT to the one measured before the run, `result.summary["health"]` says whether the
    emulation was clean. force: run a capacity above this machine's clean limit. timeout_s: a
    wall-time limit, set-up included: the traffic runs only as long as it leaves (the result
    marked partial), RunTimeout if that is not past the warm-up. progress: a bar of the run's
    seconds (None: where someone watches)."""
    deadline = Deadline(timeout_s)
    prepared = prepare(scenario, overrides, base_dir, engine="kernel")
    p = plan(prepared, force)
    require_root()
    # What a run killed outright (SIGKILL: no chance to clean up) left behind is removed here, at
    # the next start, once its owner is gone; the summary names it.
    left = cleanup()
    net = netns.Network(f"{os.getpid()}-{next(_runs)}")
    with _sigterm_exits():
        try:
            return _run(net, prepared, p, left, deadline, progress)
        finally:
            # A second Ctrl-C or SIGTERM waits until the clean-up is done (then it is raised).
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            try:
                net.close()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def cleanup(all_owners: bool = False) -> list[str]:
    """Removes namespaces (and what runs in them) and temporary directories left by
    kernel-engine runs whose process is gone (or every one with the prefix); returns them."""
    names = netns.leftover_namespaces(all_owners)
    for name in names:
        netns.delete_namespace(name)
    # The sample files of a run killed outright (SIGKILL) stay in its temporary directory.
    for d in Path(tempfile.gettempdir()).glob(f"{netns.PREFIX}*"):
        pid = d.name[len(netns.PREFIX):].split("-")[0]
        if d.is_dir() and pid.isdigit() and (all_owners or not netns.owner_alive(int(pid))):
            shutil.rmtree(d, ignore_errors=True)
            names.append(str(d))
    return names


def _probe(net: netns.Network, i: int, n: int) -> float:
    src, dst = netns.flow_address(netns.SENDER_NET, i), netns.flow_address(netns.RECEIVER_NET, i)
    out = netns.run(sys.executable, "-I", str(netns.HERE / "rttprobe.py"), src, dst, str(n), "0.02", ns=net.ns("snd"))
    rtts = json.loads(out)
    if not rtts:
        raise LossyncError("engine kernel: the network did not answer an ICMP echo before the run")
    return float(np.median(rtts))


def _start_delay_box(net: netns.Network, delays: dict[str, float], stats: Path) -> subprocess.Popen:
    box = net.start("dly", "delaybox.py", "d0", "d1", json.dumps(delays), str(stats))
    time.sleep(0.2)  # its sockets are bound before the first frame
    if box.poll() is not None:
        raise LossyncError(f"engine kernel: the delay box failed: {box.stderr.read().decode().strip()}")
    return box


def _check_rtts(net: netns.Network, p: Plan, probes: int = 5) -> dict[float, float]:
    """Each distinct target RTT -> the median ICMP RTT of its first flow."""
    firsts = {f.rtt_s: i for i, f in reversed(list(enumerate(p.flows)))}
    return {rtt: _probe(net, i, probes) for rtt, i in sorted(firsts.items())}


def _delay_box_for_targets(net: netns.Network, p: Plan, own_rtt: float, stats: Path) -> tuple[subprocess.Popen, dict[float, float]]:
    """Starts the delay box with delays that make each flow's RTT its target: half of (target -
    the network's own RTT) each way, then corrected once by what the check measured (the box
    adds a little of its own per frame), and returns it with the final check."""
    def start(correction: dict[float, float]) -> tuple[subprocess.Popen, dict[float, float]]:
        delays = {netns.flow_address(netns.SENDER_NET, i): max(0.0, (f.rtt_s - own_rtt - correction.get(f.rtt_s, 0.0)) / 2)
                  for i, f in enumerate(p.flows)}
        box = _start_delay_box(net, delays, stats)
        return box, _check_rtts(net, p)

    box, check = start({})
    if any(abs(m - rtt) > RTT_CORRECTION_S for rtt, m in check.items()):
        _stop(net, box)
        box, check = start({rtt: m - rtt for rtt, m in check.items()})
    return box, check


def _stop(net: netns.Network, proc: subprocess.Popen) -> None:
    netns.stop_processes([proc])
    net.procs.remove(proc)


def _wait_ready(proc: subprocess.Popen, what: str, timeout_s: float = 10.0) -> None:
    import select

    if not select.select([proc.stdout], [], [], timeout_s)[0] or proc.stdout.readline().strip() != b"ready":
        raise LossyncError(f"engine kernel: the {what} did not start: {proc.stderr.read().decode().strip() if proc.poll() is not None else 'timeout'}")


def _run(net: netns.Network, prepared: Prepared, p: Plan, left: list[str], deadline: Deadline, progress: bool | None) -> Result:
    sc = prepared.resolved
    n = len(p.flows)
    run = sc["run"]
    warnings: list[str] = []
    if left:
        warnings.append(f"kernel engine: removed what an earlier run killed outright left behind: {', '.join(left)}")
    if p.capacity_bps > clean_limit_bps():
        warnings.append(f"kernel engine: forced above this machine's clean limit ({rate_text(p.capacity_bps)} > {rate_text(clean_limit_bps())}): "
                        "check summary['health'] before trusting the result")
    ecn = [f.ecn for f in p.flows]
    netns.build(net, n, p.capacity_bps, p.packet_size, p.leaf, ecn)
    if p.red is not None:
        _check_red(net, p)
    for i, f in enumerate(p.flows):
        netns.set_initial_window(net, i, f.initial_window, ssthresh=None if f.slow_start else f.initial_window,
                                 ecn_route=f.ecn and not all(ecn))
    with tempfile.TemporaryDirectory(prefix=f"{netns.PREFIX}{net.tag}-") as tmp:  # the owner's pid in its name, for cleanup()
        out = Path(tmp)
        # The network's own RTT (veths, router, an idle delay box), then the delays that make
        # each flow's RTT its target, checked.
        box = _start_delay_box(net, {}, out / "box0.json")
        own_rtt = _probe(net, 0, 10)
        _stop(net, box)
        box, rtt_check = _delay_box_for_targets(net, p, own_rtt, out / "box.json")
        # tcp_cubic's hystart is a module parameter for the whole machine: say where it differs.
        cubic = [f for f in p.flows if f.cc == "cubic"]
        if any(f.slow_start and not f.hystart for f in cubic) and _hystart_on():
            warnings.append("kernel engine: Linux CUBIC leaves slow start by HyStart (tcp_cubic hystart=1), which the scenario does not ask (hystart = \"linux\")")
        if any(f.hystart for f in cubic) and not _hystart_on():
            warnings.append("kernel engine: the scenario asks CUBIC's HyStart, which this machine's tcp_cubic has off (hystart=0)")
        if any(f.alpha_switch for f in cubic):
            warnings.append(CUBIC_ALPHA_WARNING.format(engine="kernel engine", cubic="Linux CUBIC (tcp_friendliness in tcp_cubic.c)",
                                                       cubic_short="Linux"))
        bdp_pkts = max(f.rtt_s for f in p.flows) * p.capacity_bps / (8 * p.packet_size)
        buf_bytes = int(min(4 * (bdp_pkts + p.buffer_pkts + max(f.initial_window for f in p.flows)) * p.packet_size + (1 << 20), 1 << 28))
        receiver = net.start("rcv", "receiver.py", str(PORT), str(buf_bytes), stdout=subprocess.PIPE)
        _wait_ready(receiver, "receiver")
        netns.create_tcp_metrics(net, [i for i, f in enumerate(p.flows) if not f.slow_start], PORT)
        duration = float(run["duration_s"])
        record = float(run["record_interval_s"])
        stopped = None
        if (left_s := deadline.remaining_s()) is not None and left_s - START_MARGIN_S - MEASURE_MARGIN_S < duration:
            # The traffic runs for what the limit leaves; a run that would not pass the warm-up is not started.
            reach = round(left_s - START_MARGIN_S - MEASURE_MARGIN_S, 3)
            if reach < run["warmup_s"] + record:
                raise RunTimeout(f"timeout: the {deadline.timeout_s:g} s wall-time limit leaves {max(reach, 0):g} s of the {duration:g} s "
                                 f"run after the set-up, not past its {run['warmup_s']:g} s warm-up; nothing was measured")
            stopped, duration = (reach, duration), reach
        q_interval = record / max(1, int(np.ceil(record / QUEUE_INTERVAL_S)))
        s_interval = min(record, SENDER_INTERVAL_S)
        flows = [{"src": netns.flow_address(netns.SENDER_NET, i), "dst": netns.flow_address(netns.RECEIVER_NET, i), "port": PORT,
                  "cc": f.cc, "start": f.start_s} for i, f in enumerate(p.flows)]
        # Drops outside the bottleneck and CPU load are counted over the run itself.
        devices_before, softnet_before = health.device_drops(net.names), health.softnet_drops()
        t0 = time.monotonic() + START_MARGIN_S
        with health.CpuMonitor() as cpu:
            with open(out / "queue.jsonl", "w") as qf, open(out / "senders.jsonl", "w") as sf:
                sampler = net.start("rtr", "qsampler.py", "r1", repr(t0), repr(q_interval), repr(duration), stdout=qf)
                sender = net.start("snd", "sender.py", json.dumps(flows), repr(t0), repr(s_interval), repr(duration), str(buf_bytes), stdout=sf)
            _watch(sender, t0, duration, progress)
            for proc, what in ((sender, "senders"), (sampler, "queue sampler")):
                try:
                    code = proc.wait(timeout=max(1.0, t0 + duration + 30 - time.monotonic()))
                except subprocess.TimeoutExpired:
                    raise LossyncError(f"engine kernel: the {what} did not finish") from None
                if code != 0:
                    raise LossyncError(f"engine kernel: the {what} failed: {proc.stderr.read().decode().strip()[-500:]}")
        devices = health.drops_between(devices_before, health.device_drops(net.names))
        softnet = health.softnet_drops() - softnet_before
        _stop(net, box)
        box_stats = json.loads((out / "box.json").read_text()) if (out / "box.json").exists() else {}
        checked = [{"target_s": rtt, "measured_s": m, "flows": [i for i, f in enumerate(p.flows) if f.rtt_s == rtt]}
                   for rtt, m in rtt_check.items()]
        verdict = health.evaluate(checked, box_stats, cpu.report(), softnet, devices, min(f.rtt_s for f in p.flows),
                                  p.buffer_pkts * 8 * p.packet_size / p.capacity_bps, duration)
        if (w := health.unhealthy_warning(verdict)) is not None:
            warnings.append(w)
        q = np.array([json.loads(line) for line in (out / "queue.jsonl").read_text().splitlines() if line.strip()], dtype=float)
        s = np.array([json.loads(line) for line in (out / "senders.jsonl").read_text().splitlines() if line.strip()], dtype=float)
    if stopped is not None:
        warnings.append(stopped_warning(*stopped, deadline.elapsed_s()))
    result = measure(prepared, q, s, record, warnings)
    result.summary["partial"] = stopped is not None
    result.rtt_check = rtt_check
    result.summary["health"] = verdict
    return result


def _watch(proc: subprocess.Popen, t0: float, duration: float, progress: bool | None) -> None:
    """A bar of the run's seconds (real time) while `proc` runs, where progress is on."""
    bar = progress_bar(round(duration, 3), "kernel", "s", progress)
    if bar is None:
        return
    try:
        while proc.poll() is None and time.monotonic() < t0 + duration + 30:
            time.sleep(0.25)
            bar.update(round(min(duration, max(0.0, time.monotonic() - t0)) - bar.n, 3))
    finally:
        bar.close()


def _check_red(net: netns.Network, p: Plan) -> None:
    """The red qdisc the kernel installed is the one planned: thresholds, limit, Wlog (which tc
    derived from burst) and probability, or LossyncError."""
    got, red = netns.leaf_options(net), p.red
    want = {"limit": red.limit, "min": red.min, "max": red.max, "ewma": red.wlog}
    bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    if "probability" in got and abs(float(got["probability"]) - red.probability) > 1e-6:
        bad["probability"] = (got["probability"], red.probability)
    if got.get("kind") != "red" or bad:
        raise LossyncError(f"engine kernel: the bottleneck's red differs from the plan (installed, planned): {bad or got.get('kind')}")


def _hystart_on() -> bool:
    try:
        return Path("/sys/module/tcp_cubic/parameters/hystart").read_text().strip() != "0"
    except OSError:
        return False


__all__ = ["cleanup", "require_root", "run_kernel"]


def _engine_check(p: Prepared, force: bool) -> None:
    """What `run_kernel` refuses from the scenario (root is the machine's, checked when run)."""
    plan(p, force)


def _engine_run(p: Prepared, progress, force, timeout_s=None) -> Result:
    return run_kernel(p, force=force, timeout_s=timeout_s, progress=progress)


#: A run's set-up (namespaces, delay box, RTT checks) and measurement, in wall seconds, beyond
#: its duration in real time.
SETUP_S = 8.0


def _estimate(sc: dict) -> float:
    return sc["run"]["duration_s"] + SETUP_S


#: Its queue is a pfifo (drop-tail) or Linux's red, where the kernel has it (translate.plan refuses
#: red on a kernel without, as this machine's). The other AQMs are missing from this machine's
#: kernel itself (no sch_codel, sch_pie, sch_fq_codel or sch_dualpi2 module): the refusal says so.
ENGINE = Engine(
    name="kernel", about="real Linux TCP in network namespaces (as root; docs/kernel.md)",
    capabilities=CAPABILITIES, run=_engine_run, check=_engine_check, estimate=_estimate,
)
