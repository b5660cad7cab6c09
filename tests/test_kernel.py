"""The kernel engine: real Linux TCP in network namespaces (root only), and that it leaves
nothing behind (namespaces, helper processes) however a run ends."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import lossync
from lossync.engines import kernel
from lossync.engines.kernel import netns

ROOT = os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "tc", "sysctl"))
needs_root = pytest.mark.skipif(not ROOT, reason="the kernel engine needs root and iproute2 (network namespaces, tc)")

# 20 Mb/s, 40 ms, 2 Reno + 2 CUBIC flows, a buffer of one BDP (67 packets): the link stays full.
DOC = {
    "engine": "kernel",
    "dumbbell": {"capacity": "20Mbps", "buffer": {"bdp_fraction": 1.0}},
    "flows": [{"count": 2, "cc": "reno", "rtt": "40ms"}, {"count": 2, "cc": "cubic", "rtt": "40ms"}],
    "run": {"duration": "10s", "warmup": "2s"},
}
TOML = """
engine = "kernel"
[dumbbell]
capacity = "20Mbps"
buffer = { bdp_fraction = 1.0 }
[[flows]]
cc = "reno"
rtt = "40ms"
count = 2
[run]
duration = "DURATION"
"""


def namespaces(pid: int) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"{netns.PREFIX}{pid}-")]


def helpers() -> list[str]:
    # The helper scripts run as `python -I .../engines/kernel/<script>.py`.
    out = subprocess.run(["pgrep", "-af", f"{os.sep}engines{os.sep}kernel{os.sep}"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def assert_nothing_left(pid: int) -> None:
    assert namespaces(pid) == []
    assert helpers() == []
    assert list(Path(tempfile.gettempdir()).glob(f"{netns.PREFIX}{pid}-*")) == []


def cli(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lossync", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@needs_root
def test_full_link_and_the_packet_engines_summary_keys():
    t = time.perf_counter()
    r = lossync.run(DOC)
    wall = time.perf_counter() - t
    s = r.summary
    assert s["engine"] == "kernel"
    assert s["utilization"] > 0.9
    assert 0.0 < s["loss_rate"] < 0.05
    assert s["jain"] > 0.8
    packet = lossync.run(dict(DOC, engine="packet")).summary
    assert set(s) == set(packet)
    assert set(s["flows"][0]) == set(packet["flows"][0])
    # Each RTT was checked with ICMP before the run.
    assert all(abs(measured - 0.04) < 1e-3 for measured in r.rtt_check.values()), r.rtt_check
    assert wall < 30
    assert_nothing_left(os.getpid())


@needs_root
def test_an_exception_mid_run_leaves_nothing(monkeypatch):
    start = netns.Network.start

    def start_then_fail(self, role, script, *args, **kw):
        p = start(self, role, script, *args, **kw)
        if script == "sender.py":
            time.sleep(1.5)  # the flows are sending
            assert helpers(), "the helpers should be running now"
            raise RuntimeError("injected")
        return p

    monkeypatch.setattr(netns.Network, "start", start_then_fail)
    with pytest.raises(RuntimeError, match="injected"):
        kernel.run_kernel(DOC)
    assert_nothing_left(os.getpid())


@needs_root
@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_lossync_run_leaves_nothing(tmp_path, sig, status):
    f = tmp_path / "k.toml"
    f.write_text(TOML.replace("DURATION", "60s"))
    p = cli("run", str(f))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (namespaces(p.pid) and len(helpers()) >= 4):
        time.sleep(0.2)
    assert namespaces(p.pid), "the run should have built its namespaces"
    time.sleep(1.0)
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    assert p.returncode == status, err
    assert "Traceback" not in err
    assert_nothing_left(p.pid)


@needs_root
def test_cleanup_removes_what_a_killed_run_left(tmp_path):
    f = tmp_path / "k.toml"
    f.write_text(TOML.replace("DURATION", "60s"))
    p = cli("run", str(f))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(helpers()) < 4:
        time.sleep(0.2)
    p.kill()  # no clean-up of its own
    p.communicate()
    assert namespaces(p.pid)
    c = subprocess.run([sys.executable, "-m", "lossync", "kernel", "cleanup"], capture_output=True, text=True)
    assert c.returncode == 0 and "removed" in c.stdout
    assert_nothing_left(p.pid)


@pytest.mark.parametrize("args, field", [
    (["examples/parking-lot.toml"], "links"),
    (["KERNEL_TOML", "--set", 'flows.0.cc="highspeed"'], "flows[0].cc"),
    (["KERNEL_TOML", "--set", "dumbbell.loss_rate=0.01"], "dumbbell.loss_rate"),
])
def test_what_the_kernel_cannot_run_is_refused_by_field(tmp_path, args, field):
    # Refused before anything is built, so this runs without root too.
    f = tmp_path / "k.toml"
    f.write_text(TOML.replace("DURATION", "10s"))
    args = [str(f) if a == "KERNEL_TOML" else a for a in args]
    p = cli("run", *args, "--engine", "kernel", cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2, err
    assert err.count("\n") == 1 and err.startswith(f"lossync: error: {field}: "), err


def test_not_root_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(lossync.LossyncError, match="needs root"):
        kernel.run_kernel(DOC)
