"""The kernel engine's network: four namespaces, named `lsk-<pid>-<role>` so that leftovers of
a crashed run can be found by prefix and their owner's pid, joined by veth pairs:

    senders (s0) ── (d0) delay box (d1) ── (r0) router (r1) ── (v0) receivers
    10.201.x.y/16                        10.201.0.1 10.202.0.1     10.202.x.y/16

The bottleneck is the router's egress towards the receivers: htb at the link's rate (tc-htb(8))
with a pfifo of B packets under it (tc-pfifo(8)), or the scenario's red (tc-red(8)). Each flow has
its own sender and receiver address, so the delay box and the per-destination routes (initial
window, ECN) can tell flows apart.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import LossyncError

PREFIX = "lsk-"
ROLES = ("snd", "dly", "rtr", "rcv")
ETH_HEADER_BYTES = 14  # the qdisc counts a veth frame's Ethernet header (skb->len)
HERE = Path(__file__).resolve().parent


def run(*cmd: str, ns: str | None = None) -> str:
    """Runs a command (inside namespace `ns`); LossyncError with its stderr if it fails."""
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    r = subprocess.run(full, capture_output=True, text=True)
    if r.returncode != 0:
        raise LossyncError(f"engine kernel: `{' '.join(full)}` failed: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def flow_address(net: int, i: int) -> str:
    """Flow i's address in 10.<net>.0.0/16 (from .0.10; the router is .0.1)."""
    n = i + 10
    return f"10.{net}.{n // 256}.{n % 256}"


SENDER_NET, RECEIVER_NET = 201, 202
ROUTER_TO_SENDERS, ROUTER_TO_RECEIVERS = f"10.{SENDER_NET}.0.1", f"10.{RECEIVER_NET}.0.1"


@dataclass
class Network:
    """A built network: namespace names and the helper processes started in them."""

    tag: str
    names: dict[str, str] = field(default_factory=dict)
    procs: list[subprocess.Popen] = field(default_factory=list)

    def ns(self, role: str) -> str:
        return self.names[role]

    def start(self, role: str, script: str, *args: str, stdout=subprocess.DEVNULL) -> subprocess.Popen:
        """Starts one of this package's helper scripts (standard library only) in a namespace,
        in its own session so that a terminal's Ctrl-C reaches only lossync, which stops it."""
        cmd = ["ip", "netns", "exec", self.ns(role), sys.executable, "-I", str(HERE / script), *args]
        p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, start_new_session=True)
        self.procs.append(p)
        return p

    def close(self) -> None:
        """Stops every helper (SIGTERM, then SIGKILL) and deletes the namespaces. Idempotent."""
        stop_processes(self.procs)
        self.procs.clear()
        for name in self.names.values():
            delete_namespace(name)
        self.names.clear()


def stop_processes(procs: list[subprocess.Popen], grace_s: float = 2.0) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + grace_s
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        for stream in (p.stdout, p.stderr):
            if stream is not None:
                stream.close()


def delete_namespace(name: str) -> None:
    """Kills whatever still runs in the namespace, then deletes it."""
    r = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
    for pid in r.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    subprocess.run(["ip", "netns", "del", name], capture_output=True)


def leftover_namespaces(all_owners: bool = False) -> list[str]:
    """Namespaces with the prefix whose owning process (the pid in the name) is gone (or all)."""
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    found = []
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(PREFIX):
            continue
        pid = name[len(PREFIX):].split("-")[0]
        alive = pid.isdigit() and owner_alive(int(pid))
        if all_owners or not alive:
            found.append(name)
    return found


def owner_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


LEAF = "10:"  # the bottleneck qdisc's handle, under htb's class 1:1


def build(net: Network, n_flows: int, capacity_bps: float, packet_size: int, leaf: list[str], ecn: list[bool] | None = None) -> None:
    """Creates the namespaces, links, addresses, routes and the bottleneck of `net`: `leaf` is its
    qdisc as tc's arguments (`pfifo limit B`, `red ...`). `ecn`: which flows are ECN-capable;
    where all are, the senders' net.ipv4.tcp_ecn is 1 (request ECN on every connection,
    ip-sysctl.rst); where some are, it stays 2 (never request it) and `set_initial_window` gives
    theirs a route with `features ecn` (ip-route(8)). The receivers keep 2: they accept ECN when
    asked."""
    for role in ROLES:
        name = f"{PREFIX}{net.tag}-{role}"
        net.names[role] = name  # first, so that an interrupt right after `add` still removes it
        run("ip", "netns", "add", name)
        # No IPv6 (router solicitations, DAD) on the wires; forwarding only in the router.
        run("sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1", ns=name)
        run("ip", "link", "set", "lo", "up", ns=name)
    snd, dly, rtr, rcv = (net.ns(r) for r in ROLES)
    pairs = [("s0", snd, "d0", dly), ("d1", dly, "r0", rtr), ("r1", rtr, "v0", rcv)]
    for a, ns_a, b, ns_b in pairs:
        run("ip", "link", "add", a, "netns", ns_a, "type", "veth", "peer", "name", b, "netns", ns_b)
    for dev, ns in (("s0", snd), ("d0", dly), ("d1", dly), ("r0", rtr), ("r1", rtr), ("v0", rcv)):
        run("ip", "link", "set", dev, "mtu", str(packet_size), ns=ns)
    for devs, ns in ((["s0"], snd), (["d0", "d1"], dly), (["r0", "r1"], rtr), (["v0"], rcv)):
        run(sys.executable, "-I", str(HERE / "offload.py"), *devs, ns=ns)
        for dev in devs:
            run("ip", "link", "set", dev, "up", ns=ns)
    for dev in ("d0", "d1"):  # the delay box reads frames addressed to the router and senders
        run("ip", "link", "set", dev, "promisc", "on", ns=dly)
    run("ip", "addr", "add", f"{ROUTER_TO_SENDERS}/16", "dev", "r0", ns=rtr)
    run("ip", "addr", "add", f"{ROUTER_TO_RECEIVERS}/16", "dev", "r1", ns=rtr)
    run("sysctl", "-q", "-w", "net.ipv4.ip_forward=1", ns=rtr)
    if ecn and all(ecn):
        run("sysctl", "-q", "-w", "net.ipv4.tcp_ecn=1", ns=snd)
    for i in range(n_flows):
        run("ip", "addr", "add", f"{flow_address(SENDER_NET, i)}/16", "dev", "s0", ns=snd)
        run("ip", "addr", "add", f"{flow_address(RECEIVER_NET, i)}/16", "dev", "v0", ns=rcv)
    run("ip", "route", "add", "default", "via", ROUTER_TO_SENDERS, ns=snd)
    run("ip", "route", "add", "default", "via", ROUTER_TO_RECEIVERS, ns=rcv)
    # The bottleneck. htb counts the 14-byte Ethernet header of each frame, so its rate is
    # scaled for IP packets of packet_size bytes to leave at exactly the link's capacity.
    rate = int(round(capacity_bps * (packet_size + ETH_HEADER_BYTES) / packet_size))
    run("tc", "qdisc", "add", "dev", "r1", "root", "handle", "1:", "htb", "default", "1", ns=rtr)
    run("tc", "class", "add", "dev", "r1", "parent", "1:", "classid", "1:1", "htb", "rate", f"{rate}bit", "ceil", f"{rate}bit", ns=rtr)
    run("tc", "qdisc", "add", "dev", "r1", "parent", "1:1", "handle", LEAF, *leaf, ns=rtr)


def leaf_options(net: Network) -> dict:
    """The bottleneck qdisc's options as the kernel reports them (`tc -d -j qdisc show`: for red,
    limit, min and max in bytes, ewma = Wlog, probability)."""
    import json

    for q in json.loads(run("tc", "-d", "-j", "qdisc", "show", "dev", "r1", ns=net.ns("rtr"))):
        if q.get("handle") == LEAF:
            return dict(q.get("options") or {}, kind=q.get("kind"))
    raise LossyncError(f"engine kernel: no qdisc {LEAF} on the bottleneck")


def set_initial_window(net: Network, i: int, window_pkts: int, ssthresh: int | None = None, ecn_route: bool = False) -> None:
    """Flow i's initial congestion window (the route's initcwnd, ip-route(8)) and, given, a
    locked initial ssthresh; the receiver advertises at least the window from the start
    (initrwnd). Linux reads the ssthresh only from a TCP metrics entry for the destination
    (tcp_init_metrics, with tcp_no_ssthresh_metrics_save = 0, ip-sysctl.rst), which a finished
    connection creates: see `create_tcp_metrics`. ecn_route: the route asks for ECN (`features
    ecn`), for a flow that is ECN-capable beside others that are not."""
    extra = ["ssthresh", "lock", str(ssthresh)] if ssthresh is not None else []
    extra += ["features", "ecn"] if ecn_route else []
    if ssthresh is not None:
        run("sysctl", "-q", "-w", "net.ipv4.tcp_no_ssthresh_metrics_save=0", ns=net.ns("snd"))
    run("ip", "route", "add", f"{flow_address(RECEIVER_NET, i)}/32", "via", ROUTER_TO_SENDERS, "initcwnd", str(window_pkts), *extra, ns=net.ns("snd"))
    run("ip", "route", "add", f"{flow_address(SENDER_NET, i)}/32", "via", ROUTER_TO_RECEIVERS, "initrwnd", str(window_pkts), ns=net.ns("rcv"))


WARM_UP = """import socket, sys
for src, dst in zip(sys.argv[2::2], sys.argv[3::2]):
    with socket.create_connection((dst, int(sys.argv[1])), source_address=(src, 0)) as s:
        s.sendall(b"x")
"""


def create_tcp_metrics(net: Network, flows: list[int], port: int) -> None:
    """One short connection per flow from its address to its receiver, so that the kernel
    creates the destination's TCP metrics entry (with the route's locked ssthresh) that the
    flow's real connection then starts from. Run with the delay box on, so the RTT it caches
    is the flow's."""
    if flows:
        pairs = [a for i in flows for a in (flow_address(SENDER_NET, i), flow_address(RECEIVER_NET, i))]
        run(sys.executable, "-I", "-c", WARM_UP, str(port), *pairs, ns=net.ns("snd"))
