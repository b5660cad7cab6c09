"""The command line as a user meets it: runs, outputs, and clear errors for bad input."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import lossync as lossync_api  # `lossync` below is the command

BASE = """
[dumbbell]
capacity = "100Mbps"
buffer = { bdp_fraction = 0.1 }
[[flows]]
count = 2
cc = "reno"
rtt = "100ms"
[run]
duration = "20s"
"""


def lossync(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lossync", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_run_prints_a_summary_and_writes_outputs(tmp_path, examples):
    out = tmp_path / "out"
    r = lossync("run", str(examples / "dumbbell-reno.toml"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "utilization" in r.stdout and "Jain" in r.stdout
    assert sorted(p.name for p in out.iterdir()) == ["events.csv", "figure.png", "scenario.toml", "series.parquet", "summary.json"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["provenance"]["scenario"]["links"][0]["capacity_bps"] == 100e6
    assert summary["provenance"]["lossync_version"]
    series = pd.read_parquet(out / "series.parquet")
    assert {"time_s", "queue_pkts.bottleneck", "cwnd_pkts.0", "rate_pps.0"} <= set(series.columns)
    assert (out / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The resolved scenario written beside it reproduces the summary (wall time aside).
    again = lossync("run", str(out / "scenario.toml"), "--json")
    assert again.returncode == 0, again.stderr
    del summary["provenance"], summary["files"]
    assert json.loads(again.stdout) == summary


def test_default_run_writes_its_figure(tmp_path):
    # The README's main job: `lossync run` with no file, shortened here with --set.
    r = lossync("run", "--set", "run.duration=300", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "paper-10g-hstcp" in r.stdout
    assert (tmp_path / "lossync-default" / "figure.png").exists()


def test_json_and_overrides(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    r = lossync("run", str(f), "--json", "--set", "dumbbell.capacity=1Gbps", "--set", "flows.0.count=3")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["links"][0]["capacity_bps"] == 1e9
    assert len(s["flows"]) == 3


def test_a_run_is_the_same_on_any_number_of_threads(tmp_path):
    # 8,200 flows: enough for the fluid engine's tcp model to step them on several threads
    # (crates/lossync-core/tests/fluid_threads.rs checks every number of the series too).
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    many = ["--set", "flows.0.count=8200", "--set", "dumbbell.capacity=1Gbps", "--duration", "0.3s", "--json"]
    one, two = (lossync("run", str(f), *many, "--threads", n) for n in ("1", "2"))
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    assert json.loads(one.stdout) == json.loads(two.stdout)
    bad = lossync("run", str(f), "--threads", "2000")
    assert bad.returncode == 2 and bad.stderr.strip() == "lossync: error: run.threads: must be in 1..=1024, got 2000"


BAD = [
    ('capacity = "100Mbps"', 'capacity = "-10Gbps"', "dumbbell.capacity: must be a positive number"),
    ('capacity = "100Mbps"', "capacity = 0", "dumbbell.capacity: must be a positive number"),
    ('capacity = "100Mbps"', "capacity = nan", "dumbbell.capacity"),
    ('cc = "reno"', 'cc = "vegas"', 'flows[0].cc.variant: unknown variant "vegas"'),
    ('cc = "reno"', 'cc = { variant = "cubic", beta = 1.5 }', "flows[0].cc.beta: 1.5 is out of range"),
    ('rtt = "100ms"', 'rtt = "100ms"\ncolour = "red"', "flows[0].colour: unknown field `colour`"),
    ("[run]", '[loss]\nmodel = "sync"\nsync = { kind = "fixed", m = 3 }\n[run]', "loss.sync.m: must be in 1..=2"),
    ("[run]", '[loss]\nmodel = "sync"\nsync = { kind = "normal", x = 1.5 }\n[run]', "loss.sync.x: must be in (0, 1]"),
    ("[run]", '[loss]\nmodel = "sync"\nsync = { kind = "normal", x = 0 }\n[run]', "loss.sync.x: must be in (0, 1]"),
    ("[run]", '[loss]\nmodel = "sync"\nsync = { kind = "empirical", file = "missing.csv" }\n[run]', "missing.csv"),
    ("buffer = { bdp_fraction = 0.1 }", "buffer = { packets = 0.5 }", "dumbbell.buffer: 0.500 packets is less than one packet"),
    ('duration = "20s"', 'duration = "0s"', "run.duration: must be a positive number"),
    ("count = 2", "count = -1", "flows[0].count: must be in 1..=1000000"),
    ('duration = "20s"', 'duration = "20s"\nthreads = 0', "run.threads: must be in 1..=1024, got 0"),
    ('duration = "20s"', 'duration = "20s"\nseries_flows = -1', "run.series_flows: must be a whole number of flows in 0..=1000000, got -1"),
    ('duration = "20s"', 'duration = "20s"\nseries_flows = 2.5', "run.series_flows: invalid type: number `2.5`, expected a whole number"),
    ('duration = "20s"', 'duration = "20s"\nscheduler = "fast"', "run.scheduler: unknown variant `fast`"),
    ('duration = "20s"', 'duration = "20s"\nscheduler = "partitioned"', "run.scheduler: the partitioned scheduler runs in the packet engine only (engine = \"packet\")"),
    ('rtt = "100ms"', 'rtt = "fast"', "flows[0].rtt"),
]


@pytest.mark.parametrize("old,new,message", BAD, ids=[b[2].split(":")[0] + f"-{i}" for i, b in enumerate(BAD)])
def test_bad_scenarios_fail_with_one_line_naming_the_field(tmp_path, old, new, message):
    assert old in BASE
    f = tmp_path / "bad.toml"
    f.write_text(BASE.replace(old, new, 1))
    out = tmp_path / "out"
    r = lossync("run", str(f), "--out", str(out))
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr
    assert message in lines[0], lines[0]
    assert not out.exists(), "nothing may be written for a bad scenario"


def test_empty_flow_list(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('flows = []\n[dumbbell]\ncapacity = "1Gbps"\nbuffer = { packets = 100 }\n')
    r = lossync("run", str(f))
    assert r.returncode == 2 and r.stderr.strip() == "lossync: error: flows: no flows: give at least one [[flows]] group"


def test_missing_file_and_syntax_error(tmp_path):
    r = lossync("run", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and "nope.toml" in r.stderr and "Traceback" not in r.stderr
    f = tmp_path / "broken.toml"
    f.write_text("[dumbbell\ncapacity = 1\n")
    r = lossync("run", str(f))
    assert r.returncode == 2 and "broken.toml" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_bad_override_is_named(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    r = lossync("run", str(f), "--set", "dumbbell.capacity=-5")
    assert r.returncode == 2 and "dumbbell.capacity" in r.stderr


def test_run_prints_the_summary_warnings_on_stderr(tmp_path):
    # A buffer of 5% of the BDP with unequal RTTs is outside the default loss model's validated
    # region (62% of the matrix's cells within 3 points); with equal RTTs it is inside (96%).
    doc = tmp_path / "small.toml"
    doc.write_text('[dumbbell]\ncapacity = "1Gbps"\nbuffer = { bdp_fraction = 0.05 }\n'
                   '[[flows]]\ncount = 2\ncc = "cubic"\nrtt = "25ms..75ms"\n[run]\nduration = "30s"\nwarmup = "5s"\n')
    r = subprocess.run([sys.executable, "-m", "lossync", "run", str(doc), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "lossync: warning: links[0].buffer: 5.0% of the BDP with unequal RTTs" in r.stderr
    assert r.stderr.count("links[0].buffer: 5.0%") == 1, r.stderr  # not again as a Python warning
    assert json.loads(r.stdout)["warnings"]
    equal = subprocess.run([sys.executable, "-m", "lossync", "run", str(doc), "--set", "flows.0.rtt=50ms"], capture_output=True, text=True)
    assert equal.returncode == 0 and "links[0].buffer" not in equal.stderr, equal.stderr


def test_summarize_shows_headline_means_with_ci_and_writes_tidy_csv(tmp_path, examples):
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'base = "{examples / "dumbbell-reno.toml"}"\nseeds = 2\nset = ["run.duration=150"]\n'
                    '[axes]\n"dumbbell.buffer.bdp_fraction" = [0.1, 0.5]\n')
    assert lossync("sweep", str(spec), "--out", str(tmp_path / "res"), "--workers", "2").returncode == 0
    r = lossync("summarize", str(tmp_path / "res"), "--csv", str(tmp_path / "t.csv"))
    assert r.returncode == 0, r.stderr
    header = r.stdout.splitlines()[0].split()
    # dumbbell-reno imposes synchronization (loss.model = "sync"), and its runs say so: both points warned.
    assert header == ["seeds", "utilization", "jain", "loss_rate", "sync_rate_mean", "mean_queueing_delay_s", "warned"]
    assert [line.endswith("2 ⚠") for line in r.stdout.splitlines()[2:4]] == [True, True], r.stdout
    assert "±" in r.stdout and max(len(line) for line in r.stdout.splitlines()) < 160
    # What ± is, under the table: the interval's level, its distribution and the seeds.
    # (dumbbell-reno imposes every loss: its runs do not depend on the seed, and a note says so.)
    assert r.stdout.splitlines()[-2:] == ["mean ± half-width of the 95% CI (t, n=2) across seeds",
                                          "± 0: every seed gave the same value (these runs do not depend on the seed; more seeds add nothing)"]
    tidy = pd.read_csv(tmp_path / "t.csv")
    assert list(tidy.columns) == ["dumbbell.buffer.bdp_fraction", "metric", "mean", "std", "n", "ci95", "warned_runs"]
    assert len(tidy) == 2 * 5 and set(tidy[tidy["metric"] == "utilization"]["n"]) == {2}
    every = lossync("summarize", str(tmp_path / "res"), "--all")
    assert "congestion_events" in every.stdout and "ci95" in every.stdout
    assert "ci95: the half-width of the 95% CI (t, n=2) across seeds" in every.stdout.splitlines(), every.stdout


def test_summarize_marks_the_points_whose_runs_warned(tmp_path):
    # Reno without slow start at 10 Gb/s sees no congestion event in 20 s (a warning); at 100 Mb/s
    # it congests at once.
    spec = tmp_path / "sweep.toml"
    spec.write_text('seeds = 2\n[base]\ndumbbell = { capacity = "10Gbps", buffer = { bdp_fraction = 0.1 } }\n'
                    'flows = [{ count = 2, cc = "reno", rtt = "20ms", slow_start = false }]\nrun = { duration = "20s" }\n'
                    '[axes]\n"dumbbell.capacity" = ["10Gbps", "100Mbps"]\n')
    assert lossync("sweep", str(spec), "--out", str(tmp_path / "res"), "--workers", "2").returncode == 0
    r = lossync("summarize", str(tmp_path / "res"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[-1] == "warned"
    assert [line.split()[0] for line in lines if line.endswith("2 ⚠")] == ["10Gbps"], r.stdout
    assert "⚠" not in next(line for line in lines if line.startswith("100Mbps")), r.stdout
    assert r.stderr.startswith("lossync: warning: 1 of 2 points average runs that warned"), r.stderr
    assert "2 runs: run.duration: no congestion event" in r.stderr, r.stderr
    table = lossync_api.summarize(lossync_api.load_results(tmp_path / "res"), ["utilization"])
    assert table[("warned_runs", "utilization")].to_dict() == {"100Mbps": 0, "10Gbps": 2}
    # The seeds of a point are its runs, whichever metric comes first: sync_rate_mean, undefined
    # without a congestion event, made the 10 Gb/s point "seeds 0" beside its mean of two runs.
    r = lossync("summarize", str(tmp_path / "res"), "--metric", "sync_rate_mean", "--metric", "utilization")
    assert [line.split()[:2] for line in r.stdout.splitlines()[2:4]] == [["100Mbps", "2"], ["10Gbps", "2"]], r.stdout


def test_version_and_shell_completion():
    r = lossync("--version")
    assert r.returncode == 0 and r.stdout.startswith("lossync, version ")
    r = subprocess.run([sys.executable, "-c", "from lossync.cli import main; main(prog_name='lossync')"],
                       env={**os.environ, "_LOSSYNC_COMPLETE": "bash_source"}, capture_output=True, text=True)
    assert "complete" in r.stdout and "_LOSSYNC_COMPLETE" in r.stdout


def test_calibrate_fit_sync_rate_fits_event_threshold_and_prints_the_rates(tmp_path):
    # The flag reaches the fit: 10 H-TCP flows, 100 Mb/s, 5% BDP, RTTs 25..75 ms, where the fluid
    # engine fitted to the utilization alone has too few flows losing per event (sync rate 0.415
    # against the packet engine's 0.436 on seed 1; docs/validation/calibration.md).
    scenario = tmp_path / "small.toml"
    scenario.write_text('[dumbbell]\ncapacity = "100Mbps"\nbuffer = { bdp_fraction = 0.05 }\n'
                        '[[flows]]\ncount = 10\ncc = "htcp"\nrtt = "25ms..75ms"\nslow_start = true\n[run]\nduration = "60s"\n')
    r = lossync("calibrate", str(scenario), "--out", str(tmp_path / "cal.toml"), "--seeds", "1", "--fit-sync-rate")
    assert r.returncode == 0, r.stderr
    assert "synchronization rate: packet" in r.stdout, r.stdout
    text = (tmp_path / "cal.toml").read_text()
    assert "and event_threshold (the synchronization rate)" in text and "packet_sync_rate = " in text, text


def test_an_interval_of_zero_in_one_metric_does_not_say_the_runs_ignore_the_seed():
    # A saturated link's utilization is 1.0 in every seed while Jain's index varies: the note said
    # "these runs do not depend on the seed; more seeds add nothing", in summarize and the report.
    import pandas as pd

    from lossync.stats import SEED_FREE, SEED_FREE_SOME, summarize, zero_interval_note

    rows = pd.DataFrame({"status": "ok", "buffer": [0.5, 0.5], "seed": [1, 2], "utilization": [1.0, 1.0],
                         "jain": [0.82, 0.76]})
    table = summarize(rows, ["utilization", "jain"], axes=["buffer"])
    assert zero_interval_note(table, ["utilization", "jain"]) == SEED_FREE_SOME
    assert zero_interval_note(table, ["utilization"]) == SEED_FREE
    assert zero_interval_note(table, ["jain"]) is None


def test_summarize_notes_an_interval_of_zero_from_runs_the_seed_does_not_change(tmp_path):
    # Every flow loses at every event (sync all) on equal RTTs: the fluid runs do not depend on the seed.
    spec = tmp_path / "sweep.toml"
    spec.write_text('seeds = 3\n[base]\ndumbbell = { capacity = "100Mbps", buffer = { bdp_fraction = 0.1 } }\n'
                    'flows = [{ count = 2, cc = "reno", rtt = "20ms" }]\nloss = { model = "sync", sync = { kind = "all" } }\n'
                    'run = { duration = "20s" }\n[axes]\n"flows.0.count" = [2]\n')
    assert lossync("sweep", str(spec), "--out", str(tmp_path / "res"), "--workers", "2").returncode == 0
    r = lossync("summarize", str(tmp_path / "res"), "--metric", "utilization")
    assert r.returncode == 0, r.stderr
    assert "± 0" in r.stdout, r.stdout
    assert r.stdout.splitlines()[-2:] == ["mean ± half-width of the 95% CI (t, n=3) across seeds",
                                          "± 0: every seed gave the same value (these runs do not depend on the seed; more seeds add nothing)"]


def test_summarize_of_one_seed_says_there_is_no_interval(tmp_path):
    spec = tmp_path / "sweep.toml"
    spec.write_text('seeds = 1\n[base]\ndumbbell = { capacity = "100Mbps", buffer = { bdp_fraction = 0.1 } }\n'
                    'flows = [{ count = 2, cc = "reno", rtt = "20ms" }]\nrun = { duration = "10s" }\n[axes]\n"flows.0.count" = [1, 2]\n')
    assert lossync("sweep", str(spec), "--out", str(tmp_path / "res"), "--workers", "2").returncode == 0
    r = lossync("summarize", str(tmp_path / "res"))
    assert r.returncode == 0 and "±" not in r.stdout.splitlines()[2], r.stdout
    assert r.stdout.splitlines()[-1].startswith("mean of one seed per point: no confidence interval"), r.stdout


def test_examples_copy_writes_a_runnable_copy_and_never_overwrites(tmp_path):
    shipped = Path(lossync_api.__file__).parent / "examples"
    r = lossync("examples", "--copy", "dumbbell-reno", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "wrote dumbbell-reno.toml", (r.stdout, r.stderr)
    assert (tmp_path / "dumbbell-reno.toml").read_bytes() == (shipped / "dumbbell-reno.toml").read_bytes()
    # Into a folder, created if missing; `.toml` in the name is accepted too.
    assert lossync("examples", "--copy", "dumbbell-reno.toml", str(tmp_path / "a" / "b")).returncode == 0
    assert (tmp_path / "a" / "b" / "dumbbell-reno.toml").is_file()
    # An existing file: one line naming it, exit 2, the file untouched.
    (tmp_path / "dumbbell-reno.toml").write_text("# mine\n")
    again = lossync("examples", "--copy", "dumbbell-reno", cwd=tmp_path)
    assert again.returncode == 2 and again.stdout == "", again
    assert again.stderr == "lossync: error: dumbbell-reno.toml: exists; not overwritten (remove it, or copy into another folder)\n"
    assert (tmp_path / "dumbbell-reno.toml").read_text() == "# mine\n"


def test_examples_copy_takes_the_data_file_an_example_reads(tmp_path):
    r = lossync("examples", "--copy", "empirical-sync", str(tmp_path / "mine"))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["empirical-sync.toml", "m-distribution.csv"]
    # The copy runs from anywhere: its data file is beside it.
    v = lossync("validate", str(tmp_path / "mine" / "empirical-sync.toml"), cwd=tmp_path)
    assert v.returncode == 0, v.stderr
    # One of its two files exists: nothing is written, the existing one is named.
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "m-distribution.csv").write_text("m,count\n1,1\n")
    r = lossync("examples", "--copy", "empirical-sync", str(tmp_path / "other"))
    assert r.returncode == 2 and "m-distribution.csv: exists; not overwritten" in r.stderr, r.stderr
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == ["m-distribution.csv"]


@pytest.mark.parametrize(("args", "first"), [
    (["--copy", "no-such"], "lossync: error: --copy: 'no-such' is not a shipped example (known: "),
    (["--copy", "../dumbbell-reno"], "lossync: error: --copy: '../dumbbell-reno' is not a shipped example"),
    (["somewhere/"], "lossync: error: DIR: a folder to copy into, with --copy NAME"),
])
def test_examples_copy_refuses_what_it_cannot_copy_in_one_line(tmp_path, args, first):
    r = lossync("examples", *args, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith(first) and r.stderr.count("\n") == 1, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_summary_prints_capacities_in_their_unit_and_counts_as_integers(tmp_path):
    from lossync.cli import summary_table

    f = tmp_path / "s.toml"
    f.write_text(BASE)
    r = lossync_api.run(f, ["dumbbell.capacity=2.5G"])
    table = summary_table(r.summary)
    link = next(line for line in table.splitlines() if line.strip().startswith("bottleneck"))
    assert "2.5 Gb/s" in link and "Gbps" not in link, link
    header = next(x for x in table.splitlines() if x.strip().startswith("flow"))
    flows = table.splitlines()[table.splitlines().index(header) + 1:]
    assert header.split()[-2:] == ["cuts", "RTOs"], header
    for line in flows:
        cuts, rtos = line.split()[-2:]
        assert cuts.isdigit() and rtos.isdigit(), line  # `309`, not `309.0`
    assert f"congestion events  {r.summary['congestion_events']}" in table


def test_the_summary_prints_a_fluid_queues_marks_and_aqm_drops():
    # The line with the queue's signals was printed only with sojourn times, which the fluid
    # engine does not have: a fluid RED-ECN run's marks (in its --json) were not in the table.
    from lossync.cli import summary_table

    doc = {"engine": "fluid", "dumbbell": {"capacity": "100Mbps", "buffer": {"packets": 500},
                                           "queue": {"discipline": "red", "min_th": 50, "max_th": 150, "ecn": True}},
           "flows": [{"count": 10, "cc": "reno", "rtt": "20ms..100ms", "ecn": True}], "run": {"duration": "20s", "warmup": "5s"}}
    r = lossync_api.run(doc, warn=False)
    link = r.summary["links"][0]
    soj = link["sojourn_mean_s"]
    assert link["mark_rate"] > 0 and (soj is None or soj != soj), link  # marks, no sojourn times (NaN)
    line = next(x for x in summary_table(r.summary).splitlines() if "marks" in x)
    assert line.split()[:3] == ["bottleneck", "marks", f"{link['mark_rate']:.2e},"], line


@pytest.mark.parametrize(("bps", "text"), [(10e9, "10 Gb/s"), (100e6, "100 Mb/s"), (2.5e9, "2.5 Gb/s"), (155.52e6, "155.52 Mb/s"),
                                           (40e3, "40 kb/s"), (9600, "9.6 kb/s"), (800, "800 b/s"), (1e12, "1 Tb/s"), (400e9, "400 Gb/s")])
def test_rates_in_words(bps, text):
    from lossync.scenario import rate_text

    assert rate_text(bps) == text


def test_a_run_of_many_flows_prints_the_first_and_last_rows_of_its_flow_table(tmp_path):
    from lossync.cli import summary_table

    # 10^6 flows printed 10^6 lines; a long table shows its ends, as pandas does, and says where
    # the rest is.
    f = tmp_path / "s.toml"
    f.write_text(BASE)
    r = lossync_api.run(f, ["flows.0.count=100", 'run.duration="2s"'])
    lines = summary_table(r.summary).splitlines()
    header = next(i for i, x in enumerate(lines) if x.strip().startswith("flow"))
    rows = lines[header + 1:]
    assert [int(x.split()[0]) for x in rows[:20]] == list(range(20))
    assert rows[20].strip() == '… 60 more flows (every flow: summary.json\'s "flows", Result.flows in Python)'
    assert [int(x.split()[0]) for x in rows[21:]] == list(range(80, 100))
    # 40 or fewer: every row.
    r = lossync_api.run(f, ["flows.0.count=40", 'run.duration="2s"'])
    lines = summary_table(r.summary).splitlines()
    header = next(i for i, x in enumerate(lines) if x.strip().startswith("flow"))
    assert [int(x.split()[0]) for x in lines[header + 1:]] == list(range(40))
