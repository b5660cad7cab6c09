"""lossync.compare: one scenario in several engines, side by side."""


import json
import subprocess
import sys

import pytest

import lossync
from lossync import ScenarioError, resolve
from lossync.comparison import compare, relative_share_error, with_send_jitter
from lossync.scenario import find_scenario, load_scenario

DOC = {
    "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.25}},
    "flows": [{"count": 2, "cc": "reno", "rtt": "40ms"}, {"count": 2, "cc": "cubic", "rtt": "40ms"}],
    "run": {"duration": "60s", "warmup": "20s"},
}


def test_rows_per_engine_and_differences_from_the_packet_engine():
    df = compare(DOC, ["fluid:tcp", "packet", "fluid:proportional"])
    assert list(df.index) == ["fluid:tcp", "packet", "fluid:proportional"]
    assert df.loc["packet", "d.utilization"] == 0.0
    for e in df.index:
        assert df.loc[e, "d.utilization"] == pytest.approx(df.loc[e, "utilization"] - df.loc["packet", "utilization"])
        # Shares of the two variants add up to one.
        assert df.loc[e, "share.reno"] + df.loc[e, "share.cubic"] == pytest.approx(1.0)
    assert relative_share_error(df.loc["packet"], df.loc["packet"]) == 0.0


def test_packet_jitter_is_the_packet_engine_with_one_packet_time_of_send_jitter_and_the_reference():
    # Floyd & Jacobson's remedy for phase effects: up to one packet time of the slowest link
    # (1500 bytes at 100 Mb/s: 0.12 ms) before each packet; a group's own send_jitter is kept.
    doc = {**DOC, "flows": [DOC["flows"][0], {**DOC["flows"][1], "send_jitter": "1ms"}]}
    flows = resolve(with_send_jitter(doc))["flows"]
    assert [f["send_jitter_s"] for f in flows] == pytest.approx([1.2e-4, 1.2e-4, 1e-3, 1e-3])
    # The deterministic engine reruns the same run on another seed; with the jitter it does not.
    seeded = lambda d, s: compare({**d, "run": {**d["run"], "seed": s}}, ["packet", "packet:jitter"])  # noqa: E731
    a, b = seeded(DOC, 1), seeded(DOC, 2)
    assert a.loc["packet", "utilization"] == b.loc["packet", "utilization"]
    assert a.loc["packet:jitter", "utilization"] != b.loc["packet:jitter", "utilization"]
    assert a.loc["packet:jitter", "d.utilization"] == 0.0  # the reference when compared


def test_pythons_compare_defaults_to_the_command_lines_engines():
    # The function compared fluid with the deterministic packet engine by default, the command
    # line with packet:jitter, the reference: one scenario gave two answers.
    from lossync.cli import compare_cmd

    default = next(p.default for p in compare_cmd.params if p.name == "engines")
    assert list(compare(DOC).index) == default.split(",") == ["fluid", "packet:jitter"]
    # And it is `lossync.compare`, as its docstring said (an AttributeError, the module its name).
    import lossync

    assert lossync.compare is compare


def test_packet_jitter_follows_the_slowest_link_and_the_overrides():
    # An audit as a new user found three faults. NSFnet's flows cross 100 Mb/s access links and a
    # 10 Gb/s core: the jitter was the core's packet time, 1.2 us, a hundredth of the bottleneck's.
    nsfnet = with_send_jitter(load_scenario("nsfnet"), (), find_scenario("nsfnet").parent)
    assert [g["send_jitter"] for g in nsfnet["flows"]] == pytest.approx([1.2e-4] * len(nsfnet["flows"]))
    # The jitter was added before the overrides, so one that replaced a flow group dropped it and
    # the "reference" ran deterministic, without a word.
    replaced = with_send_jitter(DOC, ['flows.0={count=4, cc="reno", rtt="40ms..60ms"}', "dumbbell.capacity=10Mbps"])
    assert replaced["flows"][0]["count"] == 4 and replaced["flows"][0]["send_jitter"] == pytest.approx(1.2e-3)
    # A link so slow that its packet time exceeds send_jitter's range blamed flows[0].send_jitter,
    # a field the user never set.
    with pytest.raises(ScenarioError, match=r"packet:jitter: one packet time of the slowest link is 1\.2 s") as info:
        compare(DOC, ["packet:jitter"], ["dumbbell.capacity=10kbps", "dumbbell.buffer={packets=10}"])
    assert info.value.field == "engines"


def test_unknown_fluid_model_or_engine_is_refused_by_name():
    with pytest.raises(ScenarioError, match="unknown fluid loss model 'fluid:nope'") as info:
        compare(DOC, ["packet", "fluid:nope"])
    assert info.value.field == "engines"
    with pytest.raises(ScenarioError, match="unknown engine 'bogus'"):
        compare(DOC, ["bogus"])
    with pytest.raises(ScenarioError, match="unknown engine 'packet:nope'"):
        compare(DOC, ["packet:nope"])
    # An empty model ran the packet engine under a column named "packet:".
    with pytest.raises(ScenarioError, match="unknown engine 'packet:'"):
        compare(DOC, ["packet:"])
    # A reference not compared was refused only after every engine had run.
    with pytest.raises(ScenarioError, match="'ns3' is not one of the engines compared"):
        compare({**DOC, "run": {"duration": "1e9s"}}, ["fluid", "packet"], reference="ns3")
    # Named twice: its rows collided and the table printed pandas Series reprs, exit 0.
    with pytest.raises(ScenarioError, match="'fluid' is named twice"):
        compare(DOC, ["fluid", "fluid"])
    # A stray comma was dropped without a word.
    r = subprocess.run([sys.executable, "-m", "lossync", "compare", "dumbbell-reno", "--engines", "fluid,"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("lossync: error: --engines: ") and len(r.stderr.splitlines()) == 1, r.stderr


def test_cli_prints_engines_side_by_side_and_as_json(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('''
[dumbbell]
capacity = "100Mbps"
buffer = { bdp_fraction = 0.25 }
[[flows]]
count = 2
cc = "reno"
rtt = "40ms"
[run]
duration = "60s"
warmup = "20s"
''')
    r = subprocess.run([sys.executable, "-m", "lossync", "compare", str(f), "--engines", "fluid:tcp,packet", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert list(doc) == ["fluid:tcp", "packet"]
    assert doc["fluid:tcp"]["d.utilization"] == pytest.approx(doc["fluid:tcp"]["utilization"] - doc["packet"]["utilization"])
    text = subprocess.run([sys.executable, "-m", "lossync", "compare", str(f)], capture_output=True, text=True, timeout=300)
    assert text.returncode == 0 and "difference from packet" in text.stdout
    bad = subprocess.run([sys.executable, "-m", "lossync", "compare", str(f), "--engines", "fluid,warp"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.strip() == "lossync: error: engines: unknown engine 'warp' (known: fluid, packet, ns3, kernel)"


def test_each_engines_warnings_are_shown(tmp_path):
    # A comparison hid every run's warnings: here two Reno flows of 200 ms at 1 Gb/s measured over
    # 20-60 s, which saw no congestion event in either engine (the end of slow start, not a
    # congested steady state). The table carries them per engine, the CLI prints them on stderr.
    f = tmp_path / "s.toml"
    f.write_text('[dumbbell]\ncapacity = "1Gbps"\nbuffer = { bdp_fraction = 0.25 }\n'
                 '[[flows]]\ncount = 2\ncc = "reno"\nrtt = "200ms"\nslow_start = true\n'
                 '[run]\nduration = "60s"\nwarmup = "20s"\n')
    df = compare(f, ["fluid", "packet"])
    for e in df.index:
        assert any(w.startswith("run.duration: no congestion event") for w in df.loc[e, "warnings"]), df.loc[e, "warnings"]
    r = subprocess.run([sys.executable, "-m", "lossync", "compare", str(f)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "lossync: warning: [fluid] run.duration: no congestion event" in r.stderr
    assert "lossync: warning: [packet:jitter] run.duration: no congestion event" in r.stderr  # the default reference
    j = subprocess.run([sys.executable, "-m", "lossync", "compare", str(f), "--json"], capture_output=True, text=True, timeout=300)
    assert any(w.startswith("run.duration") for w in json.loads(j.stdout)["packet:jitter"]["warnings"])


def test_parking_lot_4_per_flow_group_and_per_link(tmp_path):
    # Issue 32, acceptance 4: each flow group's throughput per engine and every link's
    # utilization, with the differences from the reference (40 s instead of 600: seconds of
    # packet engine).
    short = ["--set", "run.duration=40s", "--set", "run.warmup=10s"]
    df = compare("parking-lot-4", ["fluid", "packet:jitter"], short[1::2])
    groups, links = ["long", "short-a", "short-b", "short-c", "short-d"], ["a", "b", "c", "d"]
    for e in df.index:
        # Each link carries the long flow and its short one: their throughputs fill it as far as
        # the link's utilization says (departures, retransmissions included, against deliveries).
        for g, li in zip(groups[1:], links):
            carried = df.loc[e, "group.long.throughput_bps"] + df.loc[e, f"group.{g}.throughput_bps"]
            assert carried == pytest.approx(df.loc[e, f"link.{li}.utilization"] * 1e9, rel=0.02), (e, li)
        assert sum(df.loc[e, f"group.{g}.share"] for g in groups) == pytest.approx(1.0)
        # The headline utilization is one link's, its bottleneck's.
        assert df.loc[e, "utilization"] in [df.loc[e, f"link.{li}.utilization"] for li in links]
    fluid, packet = df.loc["fluid"], df.loc["packet:jitter"]
    assert fluid["d.group.long.throughput_bps"] == pytest.approx(fluid["group.long.throughput_bps"] - packet["group.long.throughput_bps"])
    assert fluid["d.link.a.utilization"] == pytest.approx(fluid["link.a.utilization"] - packet["link.a.utilization"])
    # The fluid engine says its long flow's figure is outside its validated region; the packet
    # engine, which is the reference, does not.
    assert any(w.startswith("flows[0] (long): its path crosses 4 links that can each be its bottleneck (a, b, c, d)") for w in fluid["warnings"])
    assert not any("bottleneck (" in w for w in packet["warnings"])

    r = subprocess.run([sys.executable, "-m", "lossync", "compare", "parking-lot-4", *short], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    at = out.index(next(line for line in out if line.startswith("flow group")))
    for k, g in enumerate(groups):
        row = out[at + 1 + 2 * k].split()  # the throughput, then the share below it
        assert row[0] == g and len(row) == 5 and row[2] == row[4] == "Mb/s", row
        share = out[at + 2 + 2 * k].split()
        assert [float(x) for x in share] == pytest.approx([df.loc[e, f"group.{g}.share"] for e in df.index], abs=6e-4)
    at = out.index(next(line for line in out if line.startswith("link ")))
    assert [out[at + 1 + k].split()[0] for k in range(4)] == links
    assert [float(x) for x in out[at + 1].split()[1:]] == pytest.approx([df.loc[e, "link.a.utilization"] for e in df.index], abs=6e-5)
    assert "difference from packet:jitter" in r.stdout
    assert "lossync: warning: [fluid] flows[0] (long): its path crosses 4 links" in r.stderr


def test_the_multi_bottleneck_warning_follows_the_validated_region():
    # NSFNet's flows cross two RED access links that can each be their bottleneck; there the
    # fluid engine's per-flow throughput stayed within 8% (docs/validation/topologies.md): no
    # warning. A dumbbell has one link.
    nsfnet = lossync.run("nsfnet", ["run.duration=5s", "run.warmup=1s"], warn=False).summary
    assert not any("can each be its bottleneck" in w for w in nsfnet["warnings"])
    lot = lossync.run("parking-lot", ["run.duration=5s", "run.warmup=1s"], warn=False).summary
    assert [w.split(":")[0] for w in lot["warnings"] if "can each be its bottleneck" in w] == ["flows[0] (long)"]


def test_every_engines_link_metrics_are_of_one_link():
    # Links a (50 Mb/s) into b and c (30 Mb/s each). The fluid engine's headline link (most drops)
    # was c, the jittered packet engine's b: the utilization row showed 0.980 (c) against 0.985
    # (b), a difference of -0.005 where the engines differ by +3 points on c itself.
    link = lambda name, cap, **k: {"name": name, "capacity": cap, "buffer": {"packets": 100}, **k}  # noqa: E731
    doc = {"links": [link("a", "50Mbps", **{"from": "r0", "to": "r1", "delay": "5ms"}),
                     link("b", "30Mbps", **{"from": "r1", "to": "r2", "delay": "5ms"}),
                     link("c", "30Mbps", **{"from": "r1", "to": "r3"})],
           "flows": [{"name": "long", "cc": "reno", "rtt": "60ms", "path": ["a", "b"]},
                     {"name": "x", "cc": "cubic", "count": 2, "rtt": "40ms", "path": ["b"]},
                     {"name": "y", "cc": "reno", "rtt": "40ms", "path": ["a", "c"]}],
           "run": {"duration": "5s"}}
    ref = "packet:jitter"
    own = {"fluid": lossync.run(dict(doc, engine="fluid"), warn=False).summary,
           ref: lossync.run(with_send_jitter(dict(doc, engine="packet")), warn=False).summary}
    table = compare(doc, ["fluid", ref], warn=False)
    assert own["fluid"]["bottleneck"] != own[ref]["bottleneck"]  # the case this is about
    for e, s in own.items():
        assert table.loc[e, "bottleneck"] == own[ref]["bottleneck"]
        link = next(li for li in s["links"] if li["name"] == own[ref]["bottleneck"])
        for m in ("utilization", "loss_rate", "mean_queue_pkts"):
            assert table.loc[e, m] == link[m], (e, m)
    assert table.loc["fluid", "d.utilization"] == table.loc["fluid", "utilization"] - table.loc[ref, "utilization"]
