"""The buffer-sizing advisor against the synchronized closed form (docs/model.md §4.2)."""

import subprocess
import sys

import pytest

from lossync.advisor import build_scenario, closed_form_buffer, closed_form_utilization, size_buffer


def reno(count: int, capacity: str, bdp: float, duration: float) -> dict:
    # The fluid window overshoots the closed form's peak by about one packet per flow (one RTT of
    # feedback), so the BDP per flow must be large for the closed form to apply.
    doc = build_scenario(capacity, [f"{count}:reno:100ms"], "all", f"{duration}s")
    doc["run"] = {"duration": f"{duration}s", "warmup": f"{duration / 10}s", "record_interval": "10s"}
    doc["flows"][0]["initial_window"] = 0.5 * bdp / count
    return doc


def test_closed_form_values():
    # docs/model.md §4.2: Reno ρ = 0 → 0.750, 0.1 → 0.818, 0.5 → 0.964, 1 → 1.000.
    for rho, u in [(0.0, 0.750), (0.1, 0.818), (0.5, 0.964), (1.0, 1.0)]:
        assert closed_form_utilization(rho, 0.5) == pytest.approx(u, abs=5e-4)
    # HSTCP as AIMD with γ = 0.808: U(0) = 0.904 (docs/model.md §4.2).
    assert closed_form_utilization(0.0, 0.808) == pytest.approx(0.904, abs=5e-4)
    rho = closed_form_buffer(0.99, 0.5)
    assert closed_form_utilization(rho, 0.5) == pytest.approx(0.99, abs=1e-9)


@pytest.mark.parametrize("count,capacity,bdp,duration", [(1, "100Mbps", 833.33, 2000), (4, "1Gbps", 8333.3, 8000)])
def test_synchronized_reno_needs_the_closed_form_buffer(count, capacity, bdp, duration):
    table, rules = size_buffer(reno(count, capacity, bdp, duration), targets=(0.99,), seeds=1, workers=2)
    want = closed_form_buffer(0.99, 0.5)  # 0.7035 of the BDP
    got = table["bdp_fraction"].iloc[0]
    assert got == pytest.approx(want, rel=0.02), (got, want)
    assert rules["rule_of_thumb_pkts"] == pytest.approx(bdp, rel=1e-4)
    assert rules["appenzeller_pkts"] == pytest.approx(bdp / count**0.5, rel=1e-4)


def test_cli_prints_the_table_and_the_rules():
    r = subprocess.run(
        [sys.executable, "-m", "lossync", "size-buffer", "--capacity", "100Mbps", "--flows", "1:reno:100ms", "--loss", "all",
         "--duration", "1000s", "--seeds", "1", "--target", "0.9", "--set", "flows.0.initial_window=400"],
        capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "rule of thumb" in r.stdout and "Appenzeller" in r.stdout and "closed form" in r.stdout
    assert "answered by the fluid engine, loss model sync" in r.stdout and "probe" in r.stderr
    bad = subprocess.run([sys.executable, "-m", "lossync", "size-buffer", "--flows", "ten:reno:100ms"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--flows ten:reno:100ms" in bad.stderr


def test_fluid_answer_checked_by_the_packet_engine():
    # The default (faithful, `tcp`) loss model answers; --verify runs the packet engine at the
    # buffer found. Issue 11's tolerance: within 3 points of the fluid utilization there.
    doc = build_scenario("100Mbps", ["10:cubic:50ms"], duration="200s")
    lines = []
    table, rules = size_buffer(doc, targets=(0.95,), seeds=2, workers=2, verify=True, progress=lines.append)
    assert (rules["engine"], rules["loss_model"]) == ("fluid", "tcp")
    row = table.iloc[0]
    assert 0 < row["bdp_fraction"] < 0.5
    assert abs(row["packet_utilization"] - row["utilization"]) <= 0.03, row.to_dict()
    # Its seeds differ (send jitter, the reference): the deterministic engine reran one run on
    # every seed and reported a confidence interval of zero.
    assert row["packet_ci95"] > 0, row.to_dict()
    assert any(line.startswith("probe") for line in lines) and any(line.startswith("verify") for line in lines)


def test_the_packet_engine_can_answer():
    doc = build_scenario("100Mbps", ["4:reno:20ms"], duration="60s")
    doc["run"].update(from_first_congestion=False, warmup="20s")
    table, rules = size_buffer(doc, targets=(0.9,), seeds=1, workers=2, engine="packet", tolerance=0.05)
    assert rules["engine"] == "packet" and table["utilization"].iloc[0] >= 0.9


def test_an_answer_from_runs_that_saw_no_congestion_says_so():
    # Two Reno flows of 200 ms at 1 Gb/s, slow start, 60 s runs with statistics after 20 s: a
    # Reno saw-tooth there lasts minutes, so every probe measures the end of slow start. The
    # fluid engine answered 0.31 BDP for U >= 0.9 and the packet engine measured 0.81 there, with
    # no word that neither run had seen a congestion event. Flows of 10 ms congest and do not warn.
    args = ["size-buffer", "--capacity", "1Gbps", "--duration", "60s", "--seeds", "1", "--target", "0.9",
            "--set", "flows.0.slow_start=true", "--set", "run.warmup=20s", "--set", "run.from_first_congestion=false"]
    run = lambda rtt, *more: subprocess.run([sys.executable, "-m", "lossync", *args, "--flows", f"2:reno:{rtt}", *more],  # noqa: E731
                                            capture_output=True, text=True, timeout=300)
    r = run("200ms", "--verify")
    assert r.returncode == 0, r.stderr
    assert "1 of 1 runs saw no congestion event" in r.stdout and "2 of 2 packet runs saw no congestion event" in r.stdout, r.stdout
    r = run("10ms")
    assert r.returncode == 0 and "no congestion event" not in r.stdout, r.stdout
    doc = build_scenario("1Gbps", ["2:reno:10ms"], duration="60s")
    doc["run"].update(from_first_congestion=False, warmup="20s")
    table, _ = size_buffer(doc, targets=(0.9,), seeds=2, workers=2)
    assert table["uncongested_runs"].iloc[0] == 0


def test_the_remedy_works_with_a_scenario_file_and_options_it_would_ignore_are_refused(tmp_path):
    # The warning's remedy is "lengthen --duration"; with a SCENARIO, --duration was ignored (and
    # so were --capacity, --flows and --loss, silently).
    path = tmp_path / "s.toml"
    path.write_text('[dumbbell]\ncapacity = "1Gbps"\nbuffer = { bdp_fraction = 1.0 }\n'
                    '[[flows]]\ncount = 2\ncc = "reno"\nrtt = "200ms"\nslow_start = true\n'
                    '[run]\nduration = "60s"\nwarmup = "20s"\nfrom_first_congestion = false\n')
    run = lambda *more: subprocess.run([sys.executable, "-m", "lossync", "size-buffer", str(path), "--seeds", "1",  # noqa: E731
                                        "--target", "0.9", *more], capture_output=True, text=True, timeout=300)
    r = run()
    assert r.returncode == 0 and "1 of 1 runs saw no congestion event" in r.stdout, r.stdout + r.stderr
    r = run("--duration", "2000s")  # a Reno saw-tooth of 200 ms at 1 Gb/s lasts about 800 s
    assert r.returncode == 0 and "no congestion event" not in r.stdout, r.stdout + r.stderr
    for option in (["--capacity", "1Gbps"], ["--flows", "2:reno:10ms"], ["--loss", "proportional"]):
        r = run(*option)
        assert r.returncode == 2 and r.stderr.startswith(f"lossync: error: {option[0]}: ") and len(r.stderr.splitlines()) == 1, r.stderr


def test_an_answer_from_runs_that_saw_no_congestion_says_so_reached_or_not():
    # Before: "not reached at 2.0 BDP" from probes that never left slow start's ramp (60 s at
    # 10 Gb/s, 80 ms), with their "no congestion event" warnings swallowed.
    r = subprocess.run([sys.executable, "-m", "lossync", "size-buffer", "--flows", "10:reno:80ms", "--target", "0.9",
                        "--duration", "60s", "--seeds", "1"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "not reached at 2.0 BDP" in r.stdout
    assert ("warning: at the largest buffer probed for U≥0.9, 1 of 1 runs saw no congestion event after the warm-up"
            in r.stdout), r.stdout
    table, _ = size_buffer(build_scenario("10Gbps", ["10:reno:80ms"], duration="60s"), (0.9,), seeds=1)
    assert table["uncongested_runs"].iloc[0] == 1
    assert any("no congestion event" in w for w in table["warnings"].iloc[0])


def test_sweep_rows_carry_their_runs_warnings(tmp_path):
    from lossync import sweep

    rows = sweep({"base": {"dumbbell": {"capacity": "10Gbps", "buffer": {"bdp_fraction": 0.1}},
                                   "flows": [{"count": 2, "cc": "reno", "rtt": "80ms"}], "run": {"duration": "20s"}},
                          "axes": {"flows.0.count": [2, 3]}}, tmp_path / "out", workers=1)
    assert all(any("no congestion event" in w for w in ws) for ws in rows["warnings"])
