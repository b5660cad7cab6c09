"""Bad input, one table: every case through `lossync run`, `lossync validate`, `run --engine packet`
and the Python API gives one line naming the field, exit status 2, no traceback and nothing
written."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import lossync

ROOT = Path(__file__).resolve().parent.parent
GOOD = ROOT / "examples" / "dumbbell-reno.toml"

#: (case, scenario file content or None for GOOD, --set overrides, the field the error must name)
SCENARIO_CASES = [
    ("negative list index", None, ["flows.-1.count=3"], "flows.-1"),
    ("list index past the end", None, ["flows.4.count=3"], "flows.4"),
    ("override without =", None, ["flows.0.count"], "--set flows.0.count"),
    ("not a number", None, ["dumbbell.capacity=nan"], "dumbbell.capacity"),
    ("sync x out of range", None, ['loss.sync={kind="normal", x=1.5}'], "loss.sync.x"),
    ("value where a table is", None, ["run.duration.x=1"], "run.duration"),
    ("a field the sync kind does not take", None, ["loss.sync.x=0.3"], "loss.sync.x"),
    ("a field drop-tail does not take", None, ['dumbbell.queue={discipline="droptail", max_th=5}'], "dumbbell.queue.max_th"),
    ("NaN RED threshold", None, ['dumbbell.queue={discipline="red", min_th=nan, max_th=15}'], "dumbbell.queue.min_th"),
    ("zero packet size", None, ["dumbbell.packet_size=0"], "dumbbell.packet_size"),
    # Queue disciplines (issue 35): an unknown one, parameters out of range, ECN where it cannot be.
    ("unknown discipline", None, ['dumbbell.queue={discipline="cake"}'], "dumbbell.queue.discipline"),
    ("CoDel target above its interval", None, ['dumbbell.queue={discipline="codel", target="150ms"}'], "dumbbell.queue.target"),
    ("PIE gain out of range", None, ['dumbbell.queue={discipline="pie", alpha=-1}'], "dumbbell.queue.alpha"),
    ("FQ-CoDel without queues", None, ['dumbbell.queue={discipline="fq_codel", flows=0}'], "dumbbell.queue.flows"),
    ("DualPI2 coupling out of range", None, ['dumbbell.queue={discipline="dualpi2", k=-2}'], "dumbbell.queue.k"),
    ("ECN asked of drop-tail", None, ['dumbbell.queue={discipline="droptail", ecn=true}'], "dumbbell.queue.ecn"),
    ("ECN asked of BBR", None, ['flows.0.cc="bbr"', "flows.0.ecn=true"], "flows[0].ecn"),
    ("fractional m", None, ['loss.sync={kind="fixed", m=2.5}'], "loss.sync.m"),
    # serde's messages, in the words of TOML (not "expected i64", "expected struct LinkSpec").
    ("fractional count", None, ["flows.0.count=2.5"], "flows[0].count"),
    ("string for a number", None, ['flows.0.initial_window="x"'], "flows[0].initial_window"),
    ("negative seed", None, ["run.seed=-1"], "run.seed"),
    ("number for a table", None, ["dumbbell=5"], "dumbbell"),
    ("number for a list", None, ["flows=3"], "flows"),
    ("pair of one value", None, ['loss.sync={kind="empirical", probabilities=[[1]]}'], "loss.sync.probabilities[0]"),
    ("pair of three values", None, ['loss.sync={kind="empirical", probabilities=[[1, 1.0, 3]]}'], "loss.sync.probabilities[0]"),
    ("window parameter past TCP's largest window", None, ['flows.0.cc={variant="reno", a=1e8}'], "flows[0].cc.a"),
    ("parameter of a variant that takes none", None, ['flows.0.cc={variant="xcp", a=1}'], "flows[0].cc.a"),
    ("absurd initial window", None, ["flows.0.initial_window=1e300"], "flows[0].initial_window"),
    ("send jitter above a second", None, ['flows.0.send_jitter="2s"'], "flows[0].send_jitter"),
    ("step longer than the RTT allows", None, ['flows.0.rtt="2ms"', 'run.step="1ms"'], "run.step"),
    ("binary file", b"\x00\x01\xff\xfe binary", [], "scenario.toml"),
    ("UTF-16 file", "[dumbbell]\ncapacity = 1\n".encode("utf-16"), [], "scenario.toml"),
    ("TOML syntax", b"[dumbbell\ncapacity = 1", [], "scenario.toml"),
]

#: Two links a (x to y) and b (y to z), and one flow over `path`.
NETWORK = """
[[links]]
name = "a"
from = "x"
to = "y"
capacity = "1Gbps"
buffer = {{ packets = 50 }}
[[links]]
name = "b"
from = "y"
to = "{b_to}"
capacity = "1Gbps"
buffer = {{ packets = 50 }}
[[flows]]
cc = "reno"
rtt = "50ms"
path = {path}
"""

SCENARIO_CASES += [
    ("path through an unknown link", NETWORK.format(b_to="z", path='["a", "c"]').encode(), [], "flows[0].path[1]"),
    ("path not connected", NETWORK.format(b_to="z", path='["b", "a"]').encode(), [], "flows[0].path[1]"),
    ("path crossing a link twice", NETWORK.format(b_to="z", path='["a", "b", "a"]').encode(), [], "flows[0].path[2]"),
    ("path back to a node it left", NETWORK.format(b_to="x", path='["a", "b"]').encode(), [], "flows[0].path[1]"),
    ("link with an empty name", NETWORK.format(b_to="z", path='["a", "b"]').replace('name = "a"', 'name = ""').encode(), [], "links[0].name"),
    ("link with one end node", NETWORK.format(b_to="z", path='["a"]').replace('to = "z"\n', "").encode(), [], "links[1].to"),
]

# Units (docs/scenario.md): an unknown one, and those read two ways (refused, not guessed).
SCENARIO_CASES += [
    ("unknown rate unit", None, ["dumbbell.capacity=10furlongs"], "dumbbell.capacity"),
    ("rate in all capitals BPS", None, ["dumbbell.capacity=10GBPS"], "dumbbell.capacity"),
    ("size with a bare prefix", None, ['dumbbell.buffer={bytes="64K"}'], "dumbbell.buffer.bytes"),
    ("size with a lower-case b", None, ['dumbbell.buffer={bytes="1mb"}'], "dumbbell.buffer.bytes"),
    ("time in m", None, ["flows.0.rtt=100m"], "flows[0].rtt"),
    ("unknown time unit", None, ["run.duration=3days"], "run.duration"),
]

# Optical burst switching (docs/packet.md): the assembler's fields and burst loss.
SCENARIO_CASES += [
    ("assembly timer zero", None, ["dumbbell.assembler={timer=0}"], "dumbbell.assembler.timer"),
    ("negative assembly timer", None, ['dumbbell.assembler={timer="-1ms"}'], "dumbbell.assembler.timer"),
    ("unknown assembly policy", None, ['dumbbell.assembler={timer="1ms", policy="fifo"}'], "dumbbell.assembler.policy"),
    ("random assembly without queues", None, ['dumbbell.assembler={timer="1ms", policy="random", queues=0}'],
     "dumbbell.assembler.queues"),
    ("max burst zero", None, ['dumbbell.assembler={timer="1ms", max_burst=0}'], "dumbbell.assembler.max_burst"),
    ("burst loss above 1", None, ['dumbbell.assembler={timer="1ms"}', "dumbbell.burst_loss=1.5"], "dumbbell.burst_loss"),
    ("burst loss without an assembler", None, ["dumbbell.burst_loss=0.1"], "dumbbell.burst_loss"),
    ("window thresholds not increasing", None,
     ['dumbbell.assembler={policy="window", timers=["1ms", "5ms", "10ms"], thresholds=[64, 16]}'],
     "dumbbell.assembler.thresholds[1]"),
    # Two links of one name, the second the first's generated reverse direction: the summary listed
    # both, the series kept one.
    ("a link named as another's reverse direction", b'[[links]]\nname = "a"\ncapacity = "50Mbps"\nbuffer = { packets = 100 }\n'
     b'reverse = true\n[[links]]\nname = "a-reverse"\ncapacity = "30Mbps"\nbuffer = { packets = 100 }\n'
     b'[[flows]]\ncc = "reno"\nrtt = "40ms"\npath = ["a", "a-reverse"]\n', [], "links[1].name"),
]


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "lossync", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def _scenario(tmp_path, content):
    if content is None:
        return GOOD
    f = tmp_path / "scenario.toml"
    f.write_bytes(content)
    return f


def _one_line_naming(r, field):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("lossync: error:")]
    assert len(errors) == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    named = errors[0].removeprefix("lossync: error: ").split(": ", 1)[0]
    assert named.endswith(field), (field, errors[0])
    assert not RUST_WORDING.search(errors[0]), errors[0]


#: Words of Rust, not of the user's TOML or command line: serde's type names, the OS error code.
RUST_WORDING = re.compile(r"expected (f32|f64|[iu](8|16|32|64|size)|struct|enum)\b|os error|floating point|tuple|elements in array"
                          r"|\w::\w|takes: \)")


@pytest.mark.parametrize(("case", "content", "overrides", "field"), SCENARIO_CASES, ids=[c[0] for c in SCENARIO_CASES])
@pytest.mark.parametrize("command", ["run", "validate", "packet", "api"])
def test_bad_scenario(tmp_path, case, content, overrides, field, command):
    path = _scenario(tmp_path, content)
    sets = [a for o in overrides for a in ("--set", o)]
    out = tmp_path / "out"
    if command == "api":
        with pytest.raises(lossync.LossyncError) as info:
            lossync.run(path, overrides)
        assert info.value.field.endswith(field), (field, str(info.value))
        return
    if command == "validate":
        r = cli("validate", str(path), *sets)
    else:
        engine = ["--engine", "packet"] if command == "packet" else []
        r = cli("run", str(path), *sets, *engine, "--out", str(out))
    _one_line_naming(r, field)
    assert not out.exists() or not any(out.iterdir()), "something was written"


FLUID_BURST_CASES = [
    # What has no fluid form: refused when the run starts, naming the table the user wrote.
    ("another loss model", ['loss={model="proportional"}'], "dumbbell.assembler"),
    ("contention", ["dumbbell.burst_loss=0", "dumbbell.contention={wavelengths=2}"], "dumbbell.contention"),
    ("max burst", ['dumbbell.assembler={timer="1ms", max_burst=10}'], "dumbbell.assembler.max_burst"),
]


@pytest.mark.parametrize(("case", "extra", "field"), FLUID_BURST_CASES, ids=[c[0] for c in FLUID_BURST_CASES])
@pytest.mark.parametrize("api", [False, True])
def test_the_fluid_engine_refuses_what_burst_assembly_has_no_fluid_form_for(tmp_path, case, extra, field, api):
    sets = ['dumbbell.assembler={timer="1ms"}', "dumbbell.burst_loss=0.02", 'engine="fluid"', 'loss={model="tcp"}', *extra]
    if api:
        with pytest.raises(lossync.LossyncError) as info:
            lossync.run(GOOD, sets)
        assert info.value.field == field, str(info.value)
        return
    out = tmp_path / "out"
    r = cli("run", str(GOOD), *[a for o in sets for a in ("--set", o)], "--out", str(out))
    _one_line_naming(r, field)
    assert not out.exists() or not any(out.iterdir()), "something was written"


def test_a_scenario_dict_with_numpy_values_and_tuples_runs_and_odd_values_are_refused():
    np = pytest.importorskip("numpy")
    doc = {"dumbbell": {"capacity": np.float64(1e8), "buffer": {"bdp_fraction": np.float32(0.25)}},
           "flows": ({"count": np.int64(2), "cc": "reno", "rtt": "40ms"},), "run": {"duration": 30, "warmup": 5}}
    assert 0 < lossync.run(doc).summary["utilization"] <= 1
    with pytest.raises(lossync.ScenarioError) as info:
        lossync.run(dict(doc, run={"duration": object()}))
    assert info.value.field == "run.duration"
    deep: dict = {}
    node = deep
    for _ in range(200):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(lossync.ScenarioError, match="nested deeper"):
        lossync.run(deep)


SWEEP_CASES = [
    ("log range from 0", '"dumbbell.buffer.bdp_fraction" = { from = 0, to = 1, num = 3, scale = "log" }', "seeds = 1", "sweep.axes.dumbbell.buffer.bdp_fraction"),
    ("a trillion seeds", '"dumbbell.buffer.bdp_fraction" = [0.1]', "seeds = 1000000000000", "sweep.seeds"),
    ("set entry without =", '"dumbbell.buffer.bdp_fraction" = [0.1]', 'seeds = 1\nset = ["run.duration"]', "--set run.duration"),
    # A range's own fault, not "Input should be a valid list" for every one of them.
    ("range without num", '"dumbbell.buffer.bdp_fraction" = { from = 0.1, to = 1 }', "seeds = 1", "sweep.axes.dumbbell.buffer.bdp_fraction.num"),
    ("range with a step", '"dumbbell.buffer.bdp_fraction" = { from = 0.1, to = 1, num = 3, step = 2 }', "seeds = 1",
     "sweep.axes.dumbbell.buffer.bdp_fraction.step"),
    # Every point bad: refused before anything runs, not a sweep of failed rows with exit 1.
    ("axis no scenario has", '"bogus.field" = [1, 2]', "seeds = 1", "bogus"),
    ("set value every point refuses", '"dumbbell.buffer.bdp_fraction" = [0.1]', 'seeds = 1\nset = ["run.duration=abc"]', "run.duration"),
    # One point listed twice ran twice and counted as two seeds: a range of one value, equal
    # numbers written two ways, one rate in two units; and `seeds = true` ran as one seed.
    ("a range of one value", '"dumbbell.buffer.bdp_fraction" = { from = 0.1, to = 0.1, num = 4 }', "seeds = 1", "sweep.axes"),
    ("one number written two ways", '"flows.0.initial_window" = [10, 10.0]', "seeds = 1", "sweep.axes"),
    ("one rate in two units", '"dumbbell.capacity" = ["100Mbps", "0.1Gbps"]', "seeds = 1", "sweep.axes"),
    ("seeds true", '"dumbbell.buffer.bdp_fraction" = [0.1]', "seeds = true", "sweep.seeds"),
]


@pytest.mark.parametrize(("case", "axis", "extra", "field"), SWEEP_CASES, ids=[c[0] for c in SWEEP_CASES])
def test_bad_sweep(tmp_path, case, axis, extra, field):
    f = tmp_path / "sweep.toml"
    f.write_text(f'base = "{GOOD}"\n{extra}\n[axes]\n{axis}\n')
    r = cli("sweep", str(f), "--out", str(tmp_path / "out"))
    _one_line_naming(r, field)
    assert not (tmp_path / "out" / "runs").exists()


@pytest.mark.parametrize("kind", ["device zero", "device urandom", "pipe", "huge", "deep TOML", "deep JSON", "deep --set"])
@pytest.mark.parametrize("command", ["run", "validate", "sweep", "api"])
def test_a_scenario_or_sweep_file_that_is_no_text_file_or_nests_too_deep_is_one_line(tmp_path, kind, command):
    """Before: /dev/zero a MemoryError after a minute, /dev/urandom a hang, 3,000 nested brackets a
    RecursionError of 2,998 lines. Only regular files of at most 64 MiB are read, and nesting that
    exhausts the parser's recursion is refused like any nesting beyond 32 levels."""
    f, sets = tmp_path / ("scenario.json" if kind == "deep JSON" else "scenario.toml"), []
    if kind.startswith("device"):
        f = Path("/dev/" + kind.split()[1])
    elif kind == "pipe":
        os.mkfifo(f)
    elif kind == "huge":
        with open(f, "wb") as h:
            h.truncate(65 << 20)
    elif kind == "deep TOML":
        f.write_text("x = " + "[" * 3000 + "]" * 3000 + "\n")
    elif kind == "deep JSON":
        f.write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif command == "sweep":
        pytest.skip("sweep takes no --set")
    else:
        f, sets = GOOD, ["--set", "x=" + "[" * 3000 + "]" * 3000]
    field = "--set x" if sets else str(f)
    if command == "api":
        with pytest.raises(lossync.LossyncError) as info:
            lossync.run(f, sets[1:])
        assert info.value.field == field
        return
    out = tmp_path / "out"
    r = cli(command, str(f), *sets, *(["--out", str(out)] if command != "validate" else []))
    _one_line_naming(r, field)
    assert not out.exists() or not any(out.iterdir()), "something was written"


def test_the_json_validate_prints_runs_as_a_scenario_file_and_bad_json_is_one_line(tmp_path):
    # docs/scenario.md says validate's JSON is a scenario input; `lossync run v.json` read it as TOML.
    v = tmp_path / "v.json"
    v.write_text(cli("validate", str(GOOD)).stdout)
    r = cli("run", str(v), "--set", "run.duration_s=20", "--set", "run.warmup_s=5", "--out", str(tmp_path / "out"))
    assert r.returncode == 0 and (tmp_path / "out" / "summary.json").exists(), r.stderr
    for text in ("[1, 2]", "{"):
        v.write_text(text)
        _one_line_naming(cli("run", str(v)), str(v))


@pytest.mark.parametrize("content", [b"\xff\xfe\x00 binary", b"base = \n", None], ids=["binary", "TOML syntax", "missing"])
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_file_a_command_reads_that_is_not_toml_is_one_line_naming_it(tmp_path, content, command):
    f = tmp_path / "in.toml"
    if content is not None:
        f.write_bytes(content)
    r = cli(command, str(f), "--out", str(tmp_path / "out"))
    _one_line_naming(r, str(f))
    assert not (tmp_path / "out").exists()


def test_bad_options_name_the_option(tmp_path):
    r = cli("run", str(GOOD), "--out", "/proc/lossync-cannot-write-here")
    _one_line_naming(r, "--out")
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'base = "{GOOD}"\nseeds = 2\nset = ["run.duration=120"]\n[axes]\n"dumbbell.buffer.bdp_fraction" = [0.1, 0.2]\n')
    assert cli("sweep", str(spec), "--out", str(tmp_path / "res"), "--workers", "2").returncode == 0
    _one_line_naming(cli("summarize", str(tmp_path / "res"), "--metric", "utilisation"), "--metric")
    _one_line_naming(cli("plot", str(tmp_path / "res"), "--x", "dumbbell.buffer.bdp_fraction", "--y", "utilisation"), "--y")
    _one_line_naming(cli("plot", str(tmp_path / "res"), "--x", "buffer"), "--x")
    _one_line_naming(cli("plot", str(tmp_path / "res"), "--x", "dumbbell.buffer.bdp_fraction", "--output", str(tmp_path / "u.gif")), "--output")
    for fmt, magic in (("pdf", b"%PDF"), ("svg", b"<?xml"), ("png", b"\x89PNG")):
        out = tmp_path / f"u.{fmt}"
        assert cli("plot", str(tmp_path / "res"), "--x", "dumbbell.buffer.bdp_fraction", "--output", str(out)).returncode == 0
        assert out.read_bytes().startswith(magic), fmt
    # Metrics that cannot be drawn, and an axis that is the metric itself (were tracebacks).
    _one_line_naming(cli("plot", str(tmp_path / "res"), "--x", "dumbbell.buffer.bdp_fraction", "--y", "status"), "--y")
    _one_line_naming(cli("plot", str(tmp_path / "res"), "--x", "utilization"), "--x")
    # Files a command cannot write (were tracebacks naming our temporary file): one line naming the file.
    missing_dir = tmp_path / "no-such-dir"
    _one_line_naming(cli("summarize", str(tmp_path / "res"), "--csv", str(missing_dir / "s.csv")), str(missing_dir / "s.csv"))
    _one_line_naming(cli("plot", str(tmp_path / "res"), "--x", "dumbbell.buffer.bdp_fraction", "--output", str(missing_dir / "u.png")),
                     str(missing_dir / "u.png"))
    _one_line_naming(cli("sweep", str(spec), "--out", "/proc/lossync-cannot-write-here"), "/proc/lossync-cannot-write-here")
    long_name = str(tmp_path / ("x" * 300))
    _one_line_naming(cli("run", str(GOOD), "--out", long_name), long_name)
    # A damaged row in a results folder (was pyarrow's traceback).
    (tmp_path / "res" / "runs" / "damaged.parquet").write_bytes(b"not parquet")
    for command in (["summarize", str(tmp_path / "res")], ["plot", str(tmp_path / "res"), "--x", "dumbbell.buffer.bdp_fraction"]):
        _one_line_naming(cli(*command), "damaged.parquet")
    # --workers must be a positive count (click's own message names it).
    r = cli("sweep", str(spec), "--out", str(tmp_path / "res2"), "--workers", "-1")
    assert r.returncode == 2 and "--workers" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(("case", "content", "field"), [
    ("not a number", 'burst_pkts = "a"\nevent_threshold = 1\n', "loss.calibration"),
    ("unknown field", "burst_pkts = 1\nevent_threshold = 1\nfoo = 2\n", "loss.calibration"),
    ("fitted buffer not a number", "event_threshold = 1\n[fitted]\nsmallest_buffer_pkts = \"x\"\n", "loss.calibration"),
    ("fitted buffer negative", "event_threshold = 1\n[fitted]\nsmallest_buffer_pkts = -5\n", "loss.calibration"),
    ("fitted buffer huge", "event_threshold = 1\n[fitted]\nsmallest_buffer_pkts = 1e308\n", "loss.calibration"),
    ("negative", "burst_pkts = -1\nevent_threshold = 1\n", "loss.calibration"),
    ("not below the buffer", "burst_pkts = 1e9\nevent_threshold = 1\n", "loss.calibration"),
    ("TOML syntax", "burst_pkts = \n", "loss.calibration"),
    ("negative per square root", "burst_per_sqrt_buffer = -0.5\nevent_threshold = 1\n", "loss.calibration"),
    ("per square root not below the buffer", "burst_per_sqrt_buffer = 1e5\nevent_threshold = 1\n", "loss.calibration"),
    ("two headrooms", "burst_pkts = 1\nburst_per_sqrt_buffer = 1\nevent_threshold = 1\n", "loss.calibration"),
    ("sets nothing", "", "loss.calibration"),  # ran the default model under a "calibrated" warning
    ("provenance only", "[fitted]\nscenario = \"s.toml\"\n", "loss.calibration"),
])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_malformed_calibration_file_is_one_line_naming_the_field(tmp_path, case, content, field, command):
    cal = tmp_path / "cal.toml"
    cal.write_text(content)
    out = tmp_path / "out"
    extra = ["--out", str(out)] if command == "run" else []
    r = cli(command, str(GOOD), "--set", f'loss={{model="tcp", calibration="{cal}"}}', *extra)
    _one_line_naming(r, field)
    assert str(cal) in r.stderr  # which file (its out-of-range values did not say)
    assert not out.exists()


def test_a_missing_calibration_file_or_two_sources_are_refused(tmp_path):
    r = cli("run", str(GOOD), "--set", f'loss={{model="tcp", calibration="{tmp_path / "none.toml"}"}}')
    _one_line_naming(r, "loss.calibration")
    assert f"loss.calibration: {tmp_path / 'none.toml'}: no such file" in r.stderr
    (tmp_path / "cal.toml").write_text("burst_pkts = 1\nevent_threshold = 1\n")
    _one_line_naming(cli("run", str(GOOD), "--set", f'loss={{model="tcp", calibration="{tmp_path / "cal.toml"}", burst_pkts=1}}'), "loss.burst_pkts")
    _one_line_naming(cli("run", str(GOOD), "--set", f'loss={{model="tcp", calibration="{tmp_path / "cal.toml"}", burst_per_sqrt_buffer=1}}'),
                     "loss.burst_per_sqrt_buffer")
    _one_line_naming(cli("run", str(GOOD), "--set", 'loss={model="proportional", burst_pkts=1}'), "loss.burst_pkts")
    _one_line_naming(cli("run", str(GOOD), "--set", 'loss={model="proportional", burst_per_sqrt_buffer=1}'), "loss.burst_per_sqrt_buffer")
    _one_line_naming(cli("run", str(GOOD), "--set", 'loss={model="tcp", burst_pkts=1, burst_per_sqrt_buffer=1}'), "loss.burst_per_sqrt_buffer")
    _one_line_naming(cli("run", str(GOOD), "--set", f'loss={{model="tcp", calibration="{tmp_path / "cal.toml"}", fitted_buffer_pkts=40}}'),
                     "loss.fitted_buffer_pkts")
    for bad in ("-40", "0.5", "1e300"):  # a buffer of at least a packet, and a number the warning can print
        _one_line_naming(cli("run", str(GOOD), "--set", f'loss={{model="tcp", burst_pkts=1, fitted_buffer_pkts={bad}}}'), "loss.fitted_buffer_pkts")


@pytest.mark.parametrize("kind", ["missing", "directory", "not UTF-8", "device", "pipe", "huge"])
@pytest.mark.parametrize(("loss", "field"), [('{{model="tcp", calibration="{f}"}}', "loss.calibration"),
                                             ('{{model="sync", sync={{kind="empirical", file="{f}"}}}}', "loss.sync.file")])
def test_a_file_the_scenario_names_that_cannot_be_read_is_one_line_naming_field_and_file(tmp_path, kind, loss, field):
    """Only regular files are read, and at most 64 MiB of one."""
    f = tmp_path / "named"
    if kind == "directory":
        f.mkdir()
    elif kind == "not UTF-8":
        f.write_bytes(b"\xff\xfe\x00")
    elif kind == "device":  # read whole, /dev/zero exhausted memory and /dev/urandom never ended
        f = Path("/dev/zero")
    elif kind == "pipe":  # opened for reading, a pipe with no writer waits forever
        os.mkfifo(f)
    elif kind == "huge":  # sparse: 65 MiB on paper, nothing on disk
        with open(f, "wb") as h:
            h.truncate(65 << 20)
    r = cli("run", str(GOOD), "--set", "loss=" + loss.format(f=f), "--out", str(tmp_path / "out"))
    _one_line_naming(r, field)
    assert f"{field}: {f}: " in r.stderr
    with pytest.raises(lossync.InputFileError) as info:
        lossync.run(GOOD, ["loss=" + loss.format(f=f)])
    assert (info.value.field, info.value.filename) == (field, str(f))
    assert not (tmp_path / "out").exists()


#: click's usage errors, each one line naming the option (click's own take four lines).
USAGE_CASES = [
    (["run", str(GOOD), "--engine", "bogus"], "--engine"),
    (["run", str(GOOD), "--seed", "abc"], "--seed"),
    (["run", str(GOOD), "--engine"], "--engine"),
    (["run", str(GOOD), "--seeed", "3"], "--seeed"),
    (["size-buffer", str(GOOD), "--target", "abc"], "--target"),
    (["calibrate", str(GOOD)], "--out"),
    (["plot"], "RESULTS"),
    (["sweep", str(GOOD), "--workers", "-1"], "--workers"),
    (["sweep", str(GOOD), "--workers", "99999"], "--workers"),  # a process each, on a machine of a few cores
    (["bench", "--duration", "0"], "--duration"),  # 0 ran the default 3000 s without a word
    (["bench", "--step", "0"], "--step"),
    # nan passed click's range check (every comparison with it is false), and --ns3-wall had none.
    (["bench", "--ns3-wall", "nan"], "--ns3-wall"),
    (["bench", "--ns3-wall", "0"], "--ns3-wall"),
    (["bench", "--duration", "inf"], "--duration"),
    # A bad value printed the table's header on stdout first, and named the scenario field.
    (["bench", "--engine", "fluid,packet", "--capacities", "1Gbpz"], "--capacities"),
    (["bench", "--variants", "reno,vegas"], "--variants"),
    # Named the path, not the option (second audit).
    (["reproduce", "fig3", "--quick", "--out", str(ROOT / "README.md" / "sub")], "--out"),
    (["run", str(GOOD), "--timeout", "nan"], "--timeout"),
    (["compare", str(GOOD), "--timeout", "nan"], "--timeout"),
    (["size-buffer", "--flows", "2:reno:10ms", "--loss", "x=abc"], "--loss x"),  # named the alias --sync
]


@pytest.mark.parametrize(("args", "option"), USAGE_CASES, ids=[" ".join(a[:1] + a[2:]) for a, _ in USAGE_CASES])
def test_a_usage_error_is_one_line_naming_the_option(args, option):
    r = cli(*args)
    _one_line_naming(r, option)
    assert r.stdout == ""


@pytest.mark.parametrize(("args", "option"), [(["run", str(GOOD), "--out", ""], "--out"), (["run", ""], "SCENARIO"),
                                              (["sweep", str(GOOD), "--out", ""], "--out"), (["plot", ""], "RESULTS"),
                                              (["calibrate", str(GOOD), "--out", ""], "--out")])
def test_an_empty_path_is_refused_not_taken_for_the_current_folder(tmp_path, args, option):
    # `--out ''` (an unset shell variable) wrote the results into the current folder.
    _one_line_naming(cli(*args, cwd=tmp_path), option)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("field", ['burst_pkts=1', 'burst_per_sqrt_buffer=1', 'event_threshold=2', 'growth_share=0.5', 'calibration="none.toml"',
                                   'fitted_buffer_pkts=40'])
def test_the_sync_model_refuses_the_tcp_models_fields(field):
    # They were silently ignored under model = "sync" (refused under "proportional").
    name = field.split("=")[0]
    _one_line_naming(cli("validate", str(GOOD), "--set", f'loss={{model="sync", sync={{kind="all"}}, {field}}}'), f"loss.{name}")


def test_a_calibration_file_may_leave_out_event_threshold_and_a_bufferless_link_takes_no_headroom(tmp_path):
    (tmp_path / "cal.toml").write_text("burst_per_sqrt_buffer = 1.0\n")
    assert cli("validate", str(GOOD), "--set", f'loss={{model="tcp", calibration="{tmp_path / "cal.toml"}"}}').returncode == 0
    # c·√0 = 0: a bufferless link is no reason to refuse the headroom of the others.
    r = cli("validate", str(GOOD), "--set", 'dumbbell.buffer={packets=0}', "--set", 'loss={model="tcp", burst_per_sqrt_buffer=1}')
    assert r.returncode == 0, r.stderr
    # The same for a headroom in packets (it was refused: "not below the smallest buffer (0
    # packets)"), and the bufferless link runs without one.
    r = cli("run", str(GOOD), "--set", 'dumbbell.buffer={packets=0}', "--set", 'loss={model="tcp", burst_pkts=3}', "--set", "run.warmup=0", "--duration", "5s")
    assert r.returncode == 0, r.stderr


def test_calibrate_refuses_a_bad_duration_and_says_which_model_it_fits(tmp_path):
    _one_line_naming(cli("calibrate", str(GOOD), "--out", str(tmp_path / "c.toml"), "--duration", "abc"), "--duration")
    assert not (tmp_path / "c.toml").exists()
    # Its times are read as a scenario's: "2min" was refused as "not a number of seconds".
    from lossync.cli import bench, calibrate_cmd

    for command in (calibrate_cmd, bench):
        duration = next(p for p in command.params if p.name == "duration").type
        assert [duration.convert(t, None, None) for t in ("2min", "500ms", "60", "60s")] == [120.0, 0.5, 60.0, 60.0]
    # It fits the tcp model; a scenario naming another was refitted under tcp without a word.
    other = tmp_path / "proportional.toml"
    other.write_text('[dumbbell]\ncapacity = "100Mbps"\nbuffer = { packets = 20 }\n[[flows]]\ncount = 2\ncc = "reno"\n'
                     'rtt = "50ms"\n[loss]\nmodel = "proportional"\n[run]\nduration = "10s"\n')
    r = cli("calibrate", str(other), "--out", str(tmp_path / "c.toml"), "--duration", "5s", "--seeds", "1")
    assert r.returncode == 0, r.stderr
    said = "loss.model = 'proportional': this calibrates the"
    assert said in r.stderr and said in (tmp_path / "c.toml").read_text()
    # The first 5 s see no congestion event, so no synchronization rate: the summary's None stopped
    # calibrate with a TypeError when it began to read the rate. Kept at 5 s, the file says none.
    lossync.calibrate(other, tmp_path / "c5.toml", seeds=1, duration_s=5, max_doublings=0)
    assert "# packet_sync_rate: none" in (tmp_path / "c5.toml").read_text()


def test_calibrate_refuses_a_queue_whose_signals_are_not_its_buffer(tmp_path):
    # On a RED link it fitted a headroom of 81 packets of a 100-packet buffer, chasing a 0.6-point
    # gap through utilizations that do not fall with the headroom, and held the fluid queue below
    # RED's max_th (50): docs/fluid.md gives AQM links no headroom.
    red = tmp_path / "red.toml"
    red.write_text('[dumbbell]\ncapacity = "100Mbps"\nbuffer = { packets = 100 }\n'
                   'queue = { discipline = "red", min_th = 10, max_th = 50 }\n'
                   '[[flows]]\ncount = 5\ncc = "reno"\nrtt = "40ms"\n[run]\nduration = "20s"\n')
    _one_line_naming(cli("calibrate", str(red), "--out", str(tmp_path / "c.toml")), "dumbbell.queue")
    assert not (tmp_path / "c.toml").exists()


@pytest.mark.parametrize(("u", "sync", "fit"), [(None, 0.4, True), (0.9, 0.4, False), (0.9, 1.5, True), (0.9, float("nan"), True), (0.9, -0.1, True)])
def test_calibrate_refuses_a_reference_sync_rate_it_cannot_match(u, sync, fit):
    # A sync rate is a share of flows, fitted only when asked, and only beside a given utilization
    # (without one, calibrate runs the packet engine, which measures its own).
    with pytest.raises(lossync.ScenarioError, match="reference_sync_rate"):
        lossync.calibrate(GOOD, reference_utilization=u, reference_sync_rate=sync, fit_sync_rate=fit)


def test_event_threshold_out_of_range_names_its_field():
    _one_line_naming(cli("validate", str(GOOD), "--set", 'loss={model="tcp", event_threshold=0}'), "loss.event_threshold")


def test_growth_share_out_of_range_or_on_another_model_names_its_field():
    _one_line_naming(cli("validate", str(GOOD), "--set", 'loss={model="tcp", growth_share=1.5}'), "loss.growth_share")
    _one_line_naming(cli("validate", str(GOOD), "--set", 'loss={model="proportional", growth_share=0.5}'), "loss.growth_share")


VALIDATE_LIKE_RUN = [
    ("obs-dumbbell", ['engine="fluid"', 'loss.model="proportional"'], "links[0].assembler"),
    ("obs-dumbbell", ['engine="ns3"'], "links[0].assembler"),
    ("dynamic-dumbbell", ['engine="fluid"'], "flows[0].arrivals"),
    ("dumbbell-reno", ['engine="fluid"', 'dumbbell.queue={discipline="dualpi2"}', 'loss={model="proportional"}'],
     "dumbbell.queue"),
    ("obs-dumbbell", ['links.0.assembler={timer="1ms", m_distribution="m.csv"}'], "links[0].assembler.m_distribution"),
    # The packet engine's partitioned scheduler: another engine ran the scenario on its own
    # scheduler without a word, and validate passed a run the partitions' memory refuses.
    ("dumbbell-reno", ['engine="ns3"', 'run.scheduler="partitioned"'], "run.scheduler"),
    ("dumbbell-reno", ['engine="kernel"', 'run.scheduler="partitioned"'], "run.scheduler"),
    ("dumbbell-reno", ['engine="packet"', 'run.scheduler="partitioned"', "run.threads=1024", "flows.0.count=700000",
                       "dumbbell.buffer={packets=100}", 'dumbbell.capacity="100Mbps"', "flows.0.initial_window=2",
                       'run.duration="5s"', 'run.warmup="1s"'], "run.threads"),
]


@pytest.mark.parametrize(("example", "overrides", "field"), VALIDATE_LIKE_RUN, ids=[c[2] + " " + c[1][0] for c in VALIDATE_LIKE_RUN])
def test_validate_refuses_what_run_refuses(tmp_path, example, overrides, field):
    # `validate` checks that the engine named can run the scenario, not only that it parses.
    if "m_distribution" in overrides[0]:
        (tmp_path / "m.csv").write_text("m,count\n1,3\n2,1\n")
        path = tmp_path / "s.toml"
        path.write_text((ROOT / "examples" / f"{example}.toml").read_text())
        example = str(path)
    r = cli("validate", example, *[a for o in overrides for a in ("--set", o)])
    _one_line_naming(r, field)


@pytest.mark.parametrize("command", ["run", "validate"])
def test_an_engine_the_registry_lacks_is_one_line_naming_the_known_ones(tmp_path, command):
    # The core reads any engine name as an outside engine's; the registry refuses the unknown.
    r = cli(command, str(GOOD), "--set", 'engine="warp"', *(["--out", str(tmp_path / "o")] if command == "run" else []))
    _one_line_naming(r, "engine")
    assert 'unknown engine "warp" (known: fluid, packet, ns3, kernel)' in r.stderr, r.stderr
    with pytest.raises(lossync.ScenarioError, match=r'^engine: unknown engine "warp"'):
        lossync.run(GOOD, ['engine="warp"'])


@pytest.mark.skipif(importlib.util.find_spec("ns3") is not None, reason="the ns3 extra is installed")
def test_validate_refuses_ns3_without_its_extra_as_run_does(tmp_path):
    # validate accepted engine = "ns3" and run refused it: the engine's check is shared now.
    for command in ("validate", "run"):
        r = cli(command, str(GOOD), "--set", 'engine="ns3"', *(["--out", str(tmp_path / "o")] if command == "run" else []))
        _one_line_naming(r, "engine")
        assert "lossync[ns3]" in r.stderr, r.stderr


def test_a_missing_capability_is_refused_in_the_same_words_by_every_engine():
    # The fluid engine (core) and the ns3 and kernel engines (Python) refuse dynamic traffic with
    # the one checker: the same field and reason.
    dyn = ROOT / "examples" / "dynamic-dumbbell.toml"
    reasons = set()
    for engine in ("fluid", "ns3", "kernel"):
        r = cli("validate", str(dyn), "--set", f'engine="{engine}"')
        _one_line_naming(r, "flows[0].arrivals")
        reasons.add(r.stderr.split(": ", 3)[-1])
    assert reasons == {'dynamic traffic runs in the packet engine only (engine = "packet")\n'}, reasons


def test_a_new_engine_is_one_registration():
    # An engine registered in ENGINES is run, checked and refused by its capabilities with no
    # other change (here: a dumbbell-only engine that runs the packet engine under another name).
    from lossync.engines import ENGINES, Engine
    from lossync.scenario import prepare

    seen = []
    packet = ENGINES["packet"]
    toy = Engine(name="toy", about="a test", capabilities={**packet.capabilities, "topology": "dumbbell"},
                 run=lambda p, progress, force, timeout_s: seen.append("run")
                 or packet.run(prepare(p, engine="packet"), progress, force, timeout_s),
                 check=lambda p, force: seen.append("check"), estimate=packet.estimate)
    ENGINES["toy"] = toy
    try:
        doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}}, "flows": [{"cc": "reno", "rtt": "50ms"}],
               "run": {"duration": "2s"}, "engine": "toy"}
        assert lossync.engines.check(doc)["engine"] == "toy" and seen == ["check"]
        assert lossync.run(doc).summary["utilization"] > 0 and seen == ["check", "run"]
        parking = ROOT / "examples" / "parking-lot.toml"
        with pytest.raises(lossync.ScenarioError, match=r"^links: the toy engine supports one bottleneck link"):
            lossync.engines.check(parking, ['engine="toy"'])
    finally:
        del ENGINES["toy"]


def test_ecn_under_a_loss_model_without_an_ack_clock_is_one_line_naming_the_flows_ecn(tmp_path):
    # The fluid engine answers marks once per window from the tcp loss model's ACK clock only.
    path = _scenario(tmp_path, b"""engine = "fluid"
[dumbbell]
capacity = "100Mbps"
buffer = { packets = 50 }
queue = { discipline = "red", min_th = 5, max_th = 15, ecn = true }
[[flows]]
cc = "reno"
rtt = "50ms"
ecn = true
[loss]
model = "proportional"
""")
    r = cli("validate", str(path))
    _one_line_naming(r, "flows[0].ecn")
    assert 'loss.model = "tcp"' in r.stderr, r.stderr


@pytest.mark.parametrize(("engine", "words"), [("fluid", "the fluid engine has no \"codel\" queue"),
                                               ("kernel", "this machine's kernel has no codel qdisc")])
def test_an_aqm_on_an_engine_that_lacks_it_is_one_line_naming_the_queue(tmp_path, engine, words):
    # No engine runs drop-tail in its place: the queue is refused by name, pointing to one that has it.
    path = _scenario(tmp_path, None)
    r = cli("validate", str(path), "--set", 'dumbbell.queue={discipline="codel"}', "--set", f'engine="{engine}"')
    _one_line_naming(r, "dumbbell.queue")
    # Every engine that runs it, the front end's too: the fluid engine's own check named only the
    # core's ("the packet engine only"), though ns3 runs CoDel.
    assert words in r.stderr and 'codel runs in the packet and ns3 engines only (engine = "packet" or "ns3")' in r.stderr, r.stderr


def test_red_the_kernel_engine_cannot_run_is_one_line_naming_the_field(tmp_path):
    # Linux's red is not gentle (the packet engine's default): refused on any machine, before
    # what the machine's kernel lacks; and where the kernel has no red qdisc (this machine's:
    # CONFIG_NET_SCH_RED is not set), the queue is refused as codel is, pointing to the engines
    # that run it.
    from lossync.engines.kernel.translate import kernel_has_qdisc

    path = _scenario(tmp_path, None)
    red = 'dumbbell.queue={discipline="red", min_th=10, max_th=30, ecn=true%s}'
    r = cli("validate", str(path), "--set", red % "", "--set", 'engine="kernel"')
    _one_line_naming(r, "dumbbell.queue.gentle")
    assert "no gentle mode" in r.stderr and "gentle = false" in r.stderr, r.stderr
    r = cli("validate", str(path), "--set", red % ", gentle=false", "--set", 'engine="kernel"', "--set", 'flows.0.cc="reno"')
    if kernel_has_qdisc("red") is False:
        _one_line_naming(r, "dumbbell.queue")
        assert "this machine's kernel has no red qdisc" in r.stderr and "red runs in the" in r.stderr, r.stderr
    else:
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_sweep_file_given_as_a_scenario_says_to_sweep_it(command):
    # On main: "axes: unknown field `axes`", with no word of `lossync sweep`.
    r = cli(command, "sweep-buffer-sync")
    _one_line_naming(r, "axes")
    assert "lossync sweep" in r.stderr, r.stderr
