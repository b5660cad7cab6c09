"""BBR v1 through the front end: the packet engine runs it (checked against the path's own
numbers), the fluid engine's form of it agrees with the packet engine, `lossync variants` lists
it, ns-3 takes it as its TcpBbr, and the engines without it refuse it by field."""

import subprocess
import sys

import pytest

import lossync
from lossync.engines.kernel import translate

# 100 Mb/s, 40 ms, 1500-byte packets: 8333.3 packets/s, a BDP of 333 packets.
C_PPS, BDP = 1e8 / 12_000, 1e8 / 12_000 * 0.04


def doc(engine: str, cc="bbr", count=1, buffer_bdp=1.0) -> dict:
    return {
        "engine": engine,
        "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": buffer_bdp}},
        "flows": [{"count": count, "cc": cc, "rtt": "40ms"}],
        "run": {"duration": "15s", "warmup": "3s"},
    }


def test_one_bbr_flow_fills_the_link_with_a_small_queue():
    s = lossync.run(doc("packet")).summary
    # Startup ends within about a second; then the link is busy, and the gain cycle's queue
    # (at most a quarter BDP in the 5/4 phase, drained by the 3/4 one) stays small.
    assert s["utilization"] > 0.95
    assert s["mean_queue_pkts"] < 0.25 * BDP
    assert s["loss_rate"] == 0
    assert s["flows"][0]["variant"] == "bbr"
    assert s["flows"][0]["throughput_pps"] == pytest.approx(C_PPS, rel=0.05)


def test_variants_lists_bbr():
    r = subprocess.run([sys.executable, "-m", "lossync", "variants"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and any(line.split()[:1] == ["bbr"] for line in r.stdout.splitlines()), r.stdout


def test_the_fluid_engine_refuses_bbr_outside_its_tcp_model_in_one_line(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text('[dumbbell]\ncapacity = "100Mbps"\nbuffer = { bdp_fraction = 1.0 }\n'
                 '[[flows]]\ncc = "bbr"\nrtt = "40ms"\n[loss]\nmodel = "proportional"\n[run]\nduration = "5s"\n')
    r = subprocess.run([sys.executable, "-m", "lossync", "run", str(f), "--engine", "fluid"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("lossync: error: loss.model: "), r.stderr


@pytest.mark.parametrize("flows, buffer_bdp", [
    ([("bbr", "20ms..80ms", 4)], 1.0),  # BBR alone, unequal RTTs: cwnd-limited, about a BDP queued
    ([("bbr", "40ms", 5), ("cubic", "40ms", 5)], 4.0),  # a deep buffer: CUBIC holds its own
])
def test_fluid_bbr_against_the_packet_engine(flows, buffer_bdp):
    """Issue 13's tolerances for BBR's fluid form: utilization within 3 points, mean queue
    within 25%, each variant's share within 25% (relative)."""
    d = {"dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": buffer_bdp}},
         "flows": [{"cc": c, "rtt": r, "count": k} for c, r, k in flows],
         "run": {"duration": "60s", "warmup": "20s"}}
    p, f = (lossync.run(dict(d, engine=e)).summary for e in ("packet", "fluid"))

    def shares(s):
        t = {}
        for fl in s["flows"]:
            t[fl["variant"]] = t.get(fl["variant"], 0.0) + fl["throughput_pps"]
        return {v: x / sum(t.values()) for v, x in t.items()}

    assert abs(f["utilization"] - p["utilization"]) <= 0.03, (f["utilization"], p["utilization"])
    assert f["mean_queue_pkts"] == pytest.approx(p["mean_queue_pkts"], rel=0.25)
    for v, share in shares(p).items():
        assert shares(f)[v] == pytest.approx(share, rel=0.25), (v, shares(f), shares(p))


def test_the_ns3_engine_translates_bbr_to_tcpbbr_where_it_has_knobs():
    from lossync.engines.ns3 import _resolve
    from lossync.engines.ns3 import translate as ns3_translate

    params = ns3_translate(_resolve(doc("ns3"), (), None))
    flow = next(line for line in params.splitlines() if line.startswith("flow "))
    assert flow.startswith("flow ns3::TcpBbr ") and "HighGain=2.885" in flow and "BwWindowLength=10" in flow
    with pytest.raises(lossync.ScenarioError, match=r"^flows\[0\]\.cc\.cwnd_gain: "):
        ns3_translate(_resolve(doc("ns3", cc={"variant": "bbr", "cwnd_gain": 3}), (), None))


def test_the_kernel_engine_takes_bbr_at_linux_defaults_only(monkeypatch):
    from lossync.engines.ns3 import _resolve

    monkeypatch.setattr(translate, "available_variants", lambda: ["reno", "cubic", "bbr"])
    plan = translate.plan(_resolve(doc("kernel", count=2), (), None))
    assert [f.cc for f in plan.flows] == ["bbr", "bbr"]
    changed = doc("kernel", cc={"variant": "bbr", "cwnd_gain": 3})
    with pytest.raises(lossync.ScenarioError, match=r"^flows\[0\]\.cc\.cwnd_gain: "):
        translate.plan(_resolve(changed, (), None))
    monkeypatch.setattr(translate, "available_variants", lambda: ["reno", "cubic"])
    with pytest.raises(lossync.ScenarioError, match=r"^flows\[0\]\.cc: "):
        translate.plan(_resolve(doc("kernel"), (), None))
