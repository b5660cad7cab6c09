"""The `lossync` command line.

Errors a user can cause (a bad scenario, a missing file) print one line naming the field and exit
with status 2, with no traceback.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import signal
import sys
import threading
import time
from pathlib import Path

import click

from . import _core
from .cli_args import SECONDS, SIM_TIME
from .cli_args import NonEmptyPath as _Path
from .cli_args import writable_dir as _writable_dir
from .cli_results import plot, report_cmd, summarize
from .engines import ENGINES
from .engines import check as check_scenario
from .engines import run as run_scenario
from .engines.core import PCAP_PACKETS, Interrupted
from .errors import LossyncError, ScenarioError
from .io import atomic_write, json_text, os_reason
from .progress import RunTimeout
from .scenario import Prepared, default_scenario_path, prepare, variants
from .summary_text import summary_table

DEFAULT_OUT = "lossync-default"
#: Above `lossync bench --suite --out`'s table: what it is and how to remake it.
BENCH_HEADER = """# What the engines cost

Written by `lossync bench --suite --out docs/validation/bench.md` (python/lossync/bench.py says
what each case is). Each case ran alone in a fresh process: set-up is reading and resolving the
scenario and building the engine, "simulate" the run itself, peak memory the process's (VmHWM,
Python and the library included). Wall times vary by a tenth or so between runs on a shared
machine; compare versions side by side in one session.

"""


_interrupted = False


def _on_sigint(signum: int, frame: object) -> None:
    # Remembered, because a C extension the interrupt lands in may turn the KeyboardInterrupt
    # into an error of its own (matplotlib's Agg renderer: "Invalid bounding box").
    global _interrupted
    _interrupted = True
    signal.default_int_handler(signum, frame)


def _on_unraisable(args: sys.UnraisableHookArgs) -> None:
    # Ctrl-C landing in a finalizer or a weakref callback (matplotlib's, while a figure is
    # drawn) cannot propagate: Python prints it as "Exception ignored" with a traceback and
    # carries on. Remembered instead, so that the command ends as interrupted.
    global _interrupted
    if isinstance(args.exc_value, KeyboardInterrupt):
        _interrupted = True
    else:
        sys.__unraisablehook__(args)


def _on_sigint_at_exit(signum: int, frame: object) -> None:
    # The command is over (its outputs written whole, or not at all) and the interpreter is
    # shutting down: a KeyboardInterrupt raised in an exit handler (matplotlib's) is printed
    # with a traceback, and nothing is left to clean up.
    sys.stderr.write("lossync: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


#: click 8.2+ raises this for `lossync` alone (8.1 prints the help and exits itself).
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class Cli(click.Group):
    def main(self, *args, standalone_mode: bool = True, **kwargs):  # type: ignore[override]
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        # click's own usage errors take four lines (usage, hint, blank, error); ours take one.
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except _NO_ARGS_IS_HELP as e:  # `lossync` alone: the help, as click gives it
            e.show()
            sys.exit(e.exit_code)
        except click.UsageError as e:
            click.echo(f"lossync: error: {_usage_error(e)}", err=True)
            sys.exit(2)
        except click.ClickException as e:
            click.echo(f"lossync: error: {e.format_message()}", err=True)
            sys.exit(e.exit_code)
        except click.Abort:
            _exit_interrupted()
        # Without standalone mode click returns the exit code of --help / --version (an int), or
        # the command's return value, which is None for every command here.
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        main_thread = threading.current_thread() is threading.main_thread()
        if main_thread:
            signal.signal(signal.SIGINT, _on_sigint)
            sys.unraisablehook = _on_unraisable
        try:
            rv = self._invoke(ctx)
        finally:
            if main_thread:
                signal.signal(signal.SIGINT, _on_sigint_at_exit)
        if _interrupted:  # an interrupt that a finalizer swallowed: the work went on to its end
            _exit_interrupted()
        return rv

    def _invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except RunTimeout as e:  # not bad input: GNU timeout(1)'s status
            click.echo(f"lossync: error: {e}", err=True)
            sys.exit(124)
        except LossyncError as e:
            if _interrupted:
                _exit_interrupted()
            click.echo(f"lossync: error: {e}", err=True)
            sys.exit(2)
        except OSError as e:
            # A file or folder the command was told to use (an --out that cannot be written, a
            # name too long): one line naming it, as any other bad input.
            if _interrupted:
                _exit_interrupted()
            if e.filename is None:
                raise
            click.echo(f"lossync: error: {e.filename}: {os_reason(e)}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            _exit_interrupted()
        except Exception:
            if _interrupted:
                _exit_interrupted()
            raise


def _usage_error(e: click.UsageError) -> str:
    """A usage error as `option: what is wrong (the command's --help)`: the option first, as every
    other error names its field first."""
    where = f" ({e.ctx.command_path} --help)" if e.ctx is not None else ""
    if isinstance(e, click.BadParameter) and e.param is not None:
        name = e.param.opts[0] if isinstance(e.param, click.Option) or not e.param.opts else e.param.human_readable_name
        if isinstance(e, click.MissingParameter):
            return f"{name}: missing, and it is required{where}"
        return f"{name}: {e.message.rstrip('.')}{where}"
    if isinstance(e, click.NoSuchOption):
        hint = f" (did you mean {', '.join(sorted(e.possibilities))}?)" if e.possibilities else where
        return f"{e.option_name}: no such option{hint}"
    if isinstance(e, click.BadOptionUsage):  # "Option '--engine' requires an argument."
        return f"{e.option_name}: {e.message.removeprefix(f'Option {e.option_name!r} ').rstrip('.')}{where}"
    return f"{e.format_message().rstrip('.')}{where}"


#: `--timeout` and `--progress` of the long commands.
_TIMEOUT = click.option("--timeout", "timeout_s", type=SECONDS, metavar="SECONDS",
                        help="Wall-time limit: stop by then and report the part done, marked partial (docs/scenario.md, \"Progress and time limits\").")
_PROGRESS = click.option("--progress/--no-progress", default=None, help="Progress bars (default: when stderr is a terminal).")
#: A run expected to take longer than this says so before it starts.
LONG_RUN_S = 10.0


def _exit_interrupted() -> None:
    click.echo("lossync: interrupted", err=True)
    sys.exit(130)


@click.group(cls=Cli)
@click.version_option(_core.__version__, prog_name="lossync")
def main() -> None:
    """Fluid simulation of high-speed TCP variants, router buffers and loss synchronization."""


@main.command()
@click.argument("scenario", required=False, type=_Path(dir_okay=False, path_type=Path))
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario field, e.g. --set dumbbell.buffer.bdp_fraction=0.2 (repeatable).")
@click.option("--out", "out_dir", type=_Path(file_okay=False, path_type=Path), help="Write summary.json, scenario.toml, series.parquet, events.csv and figure.png here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON instead of a table.")
@click.option("--engine", type=click.Choice(list(ENGINES)), help="Run on this engine (overrides the scenario's; kernel: as root).")
@click.option("--no-figure", is_flag=True, help="With --out: skip the figure.")
@click.option("--drops", "drops_file", type=_Path(dir_okay=False, path_type=Path), help="Write the bottleneck drop log (time_s,flow) as CSV (packet engine).")
@click.option("--sync-out", "sync_file", type=_Path(dir_okay=False, path_type=Path), help="Write the measured m_k distribution (m,count) as CSV, the form loss.sync kind=\"empirical\" reads.")
@click.option("--seed", type=int, help="Shortcut for --set run.seed=SEED.")
@click.option("--duration", help="Shortcut for --set run.duration=DURATION (e.g. 600s).")
@click.option("--threads", type=int, help="Shortcut for --set run.threads=N: threads for this one run (default: every core; "
              "the fluid engine's tcp model with 8,192 flows or more uses them, and the packet engine under "
              "run.scheduler=\"partitioned\"; results are the same for any count).")
@click.option("--force", is_flag=True, help="Kernel engine: run a capacity above this machine's clean limit (the summary warns).")
@click.option("--pcap", "pcap_link", metavar="LINK", help="Packet engine: write the packets crossing LINK (both ways) as a pcap file for Wireshark/tshark.")
@click.option("--pcap-file", type=_Path(dir_okay=False, path_type=Path), help="With --pcap: the file (default: LINK.pcap, in --out if given).")
@click.option("--pcap-packets", type=click.IntRange(min=1), default=PCAP_PACKETS, show_default=True,
              help="With --pcap: keep the first this many packets (the summary says when the cap was hit).")
@_TIMEOUT
@_PROGRESS
def run(scenario: Path | None, overrides: tuple[str, ...], out_dir: Path | None, as_json: bool, engine: str | None, no_figure: bool,
        drops_file: Path | None, sync_file: Path | None, seed: int | None, duration: str | None, threads: int | None, force: bool,
        pcap_link: str | None, pcap_file: Path | None, pcap_packets: int, timeout_s: float | None, progress: bool | None) -> None:
    """Run SCENARIO (a TOML file) and print its summary.

    With no SCENARIO, runs the shipped default (the paper's 10 Gbps, 10-flow HighSpeed TCP case)
    and writes its summary, time series and figure to ./lossync-default/.
    """
    if scenario is None:
        scenario = default_scenario_path()
        out_dir = out_dir or Path(DEFAULT_OUT)
    if engine:
        overrides = (*overrides, f'engine="{engine}"')
    if seed is not None:
        overrides = (*overrides, f"run.seed={seed}")
    if duration is not None:
        overrides = (*overrides, f'run.duration="{duration}"')
    if threads is not None:
        overrides = (*overrides, f"run.threads={threads}")
    # Outputs are checked before the run, not found unwritable after it.
    if out_dir is not None:
        _writable_dir("--out", out_dir)
    if pcap_link is not None and pcap_file is None:
        pcap_file = (out_dir or Path(".")) / f"{pcap_link}.pcap"
    for option, f in (("--drops", drops_file), ("--sync-out", sync_file), ("--pcap-file", pcap_file)):
        if f is not None:
            _writable_dir(option, f.parent)
    prepared = prepare(scenario, overrides)  # read and resolved once, for the estimate and the run
    if drops_file is not None and prepared.engine != "packet":
        # The other engines keep no drop log: an empty file would read as a run without drops.
        raise ScenarioError("--drops", f"the drop log needs the packet engine (engine = \"packet\"); this scenario runs on {prepared.engine}")
    _say_estimate(prepared, force)
    started = time.perf_counter()
    try:
        result = run_scenario(prepared, force=force, warn=False, timeout_s=timeout_s, progress=progress,  # printed below
                              pcap=pcap_link, pcap_file=pcap_file, pcap_packets=pcap_packets)
    except ScenarioError as e:
        if e.field in ("pcap", "pcap_file", "pcap_packets"):  # the options' names, not the API's
            raise ScenarioError("--" + e.field.replace("_", "-"), e.reason) from None
        raise
    except Interrupted as stop:
        # Ctrl-C: the part simulated, marked partial (or whole, if the simulation had ended), is
        # written if --out was given.
        if out_dir is not None:
            stop.result.write(out_dir, figure=not no_figure, command=_command_line())
            what = ("the partial result (marked \"partial\": true)" if stop.result.summary["partial"]
                    else "the simulation had ended; its whole result")
            click.echo(f"lossync: interrupted; {what} is in {out_dir}", err=True)
        else:
            click.echo("lossync: interrupted", err=True)
        sys.exit(130)
    wall = time.perf_counter() - started
    for w in result.summary.get("warnings", []):
        click.echo(f"lossync: warning: {w}", err=True)
    if as_json:
        click.echo(json_text(result.summary))
    else:
        click.echo(summary_table(result.summary))
        click.echo(f"\n  wall time {wall:.2f} s")
    if out_dir is not None:
        paths = result.write(out_dir, figure=not no_figure, command=_command_line())
        click.echo("wrote " + ", ".join(str(p) for p in paths), err=as_json)
    if "pcap" in result.summary:
        t = result.summary["pcap"]
        cap = (f"; capped: the first {t['packets']:,} of {t['crossed']:,} that crossed it (--pcap-packets)"
               if t["capped"] else "")
        click.echo(f"wrote {t['file']} ({t['packets']:,} packets of link {t['link']}{cap})", err=as_json)
    # Their folders were checked writable before the run (_writable_dir); create them as --out is.
    for f in (drops_file, sync_file):
        if f is not None:
            f.parent.mkdir(parents=True, exist_ok=True)
    if drops_file is not None:
        atomic_write(drops_file, lambda p: result.drops.to_csv(p, index=False))
        click.echo(f"wrote {drops_file} ({len(result.drops)} drops)", err=as_json)
    if sync_file is not None:
        atomic_write(sync_file, lambda p: result.sync_distribution().to_csv(p, index=False))
        click.echo(f"wrote {sync_file}", err=as_json)


def _command_line() -> str:
    """This process's command line, as a shell would take it back (for the record an output keeps)."""
    return shlex.join(["lossync", *sys.argv[1:]])


def _say_estimate(scenario: Prepared, force: bool) -> None:
    """On stderr, before a run expected to be long: what it will take, roughly (a scenario the
    engine refuses is the one error line instead)."""
    from .engines import estimate_wall_s
    from .progress import duration_text

    estimate = estimate_wall_s(scenario, force=force)
    if estimate > LONG_RUN_S:
        click.echo(f"lossync: estimated {duration_text(estimate)} of wall time (rough, from the engine's typical speed; "
                   "--timeout SECONDS stops it with the part done)", err=True)


@main.command()
@click.argument("scenario", type=_Path(dir_okay=False, path_type=Path))
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE")
@click.option("--force", is_flag=True, help="Kernel engine: accept a capacity above this machine's clean limit, as `run --force` does.")
def validate(scenario: Path, overrides: tuple[str, ...], force: bool) -> None:
    """Check SCENARIO (valid, and runnable on the engine it names) and print it resolved (every
    default filled in) as JSON."""
    # The engine named refuses here what it refuses when run (the registry's `check`).
    prepared = prepare(scenario, overrides)
    resolved = check_scenario(prepared, force=force)
    click.echo(json.dumps(resolved, indent=2))
    if resolved["engine"] == "fluid" and resolved["loss"]["model"] == "tcp":
        _say_headroom(prepared)


def _say_headroom(prepared: Prepared) -> None:
    """On stderr, the burst headroom the fluid engine's tcp model will use on each link: a modelling
    choice the resolved scenario leaves implicit when it is the default (docs/fluid.md)."""
    resolved = prepared.resolved
    loss = resolved["loss"]
    # A calibration file may set event_threshold only: its headroom is then the default.
    set_headroom = bool({"burst_pkts", "burst_per_sqrt_buffer"} & set(loss))
    source = ("calibrated" if "calibration" in loss else "given") if set_headroom else "default"
    headroom = prepared.core.burst_headroom_pkts()
    crossed = {li for f in resolved["flows"] for li in f["path"]}  # a link no flow crosses has no queue
    for i, (link, h) in enumerate(zip(resolved["links"], headroom)):
        if link["buffer_pkts"] <= 0 or i not in crossed:
            continue
        discipline = link["queue"]["discipline"]
        if source == "default" and discipline != "droptail":
            click.echo(f"links[{i}] ({link['name']}): no burst headroom (the default is for drop-tail, whose full buffer "
                       f"bursts overflow; a {discipline} queue signals by its own rule before it is full: docs/fluid.md, "
                       "\"Burst headroom and calibration\")", err=True)
            continue
        click.echo(f"links[{i}] ({link['name']}): the fluid queue is held {h:.2f} packets below its "
                   f"{link['buffer_pkts']:.1f}-packet buffer (burst headroom, {source}; "
                   "docs/fluid.md, \"Burst headroom and calibration\")", err=True)


@main.command(name="sweep")
@click.argument("spec", type=_Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=_Path(file_okay=False, path_type=Path), help="Results folder (default: next to the sweep file, named after it).")
@click.option("--scheduler", metavar="ADDRESS", help="Run on this Dask scheduler (tcp://host:8786) instead of a local process pool.")
@click.option("--workers", type=click.IntRange(min=1, max=1024),
              help="Local pool size (default: all cores; at most 1024 processes, beyond one machine use --scheduler).")
@click.option("--resume", is_flag=True, help="Keep the finished runs in the results folder; run only the missing, failed or partial ones.")
@click.option("--timeout", "timeout_s", type=SECONDS, metavar="SECONDS",
              help="Wall-time limit per run: a run stopped by it is kept, marked partial (column `partial`, a warning), and rerun by --resume.")
def sweep_cmd(spec: Path, out_dir: Path | None, scheduler: str | None, workers: int | None, resume: bool, timeout_s: float | None) -> None:
    """Run a sweep: a base scenario, axes, seeds. One Parquet row per (point, seed) in OUT/runs/."""
    from .stats import axes_of
    from .sweeps import sweep

    # Default: beside the sweep file, or in the working folder for a shipped example named.
    out_dir = out_dir or (spec.with_suffix("") if spec.exists() else Path(spec.stem))
    try:
        results = sweep(spec, out_dir, scheduler=scheduler, workers=workers, resume=resume, announce=lambda line: click.echo(line, err=True),
                        command=_command_line(), timeout_s=timeout_s, warn=False)
    except KeyboardInterrupt:
        click.echo(f"lossync: interrupted; finished runs are in {out_dir}; rerun with --resume", err=True)
        sys.exit(130)
    failed = results[results["status"] != "ok"]
    partial = int(results.loc[results["status"] == "ok", "partial"].fillna(False).astype(bool).sum()) if "partial" in results else 0
    stopped = f", {partial} of them stopped by the time limit (partial: rerun with --resume)" if partial else ""
    click.echo(f"{len(results) - len(failed)} of {len(results)} runs succeeded{stopped}; results in {out_dir}")
    if len(failed):
        click.echo(f"{len(failed)} failed:", err=True)
        axes = axes_of(results)
        for _, row in failed.iterrows():
            point = ", ".join(f"{a}={row[a]}" for a in axes + ["seed"])
            click.echo(f"  {point}: {row['error']}", err=True)
        sys.exit(1)


@main.command()
@click.argument("name", required=False)
@click.option("--list", "list_them", is_flag=True, help="List the studies; with NAME, that study's setup and claims.")
@click.option("--quick", is_flag=True, help="A short protocol for CI, indicative only (each study's: see --list).")
@click.option("--engine", type=click.Choice(["fluid", "packet"]), default=None, help="Default: the study's own (see --list).")
@click.option("--out", "out_dir", type=_Path(file_okay=False, path_type=Path), help="Default: lossync-reproduce/NAME[-quick].")
def reproduce(name: str | None, list_them: bool, quick: bool, engine: str | None, out_dir: Path | None) -> None:
    """Reproduce a study of the seed papers: data, a figure like the paper's, and a report of
    each claim beside what was measured."""
    from .studies import reproduce as run_study
    from .studies.framework import listing

    if list_them or name is None:
        # A listing runs and writes nothing: an option only a run reads would be ignored.
        for option, given in (("--quick", quick), ("--engine", engine is not None), ("--out", out_dir is not None)):
            if given:
                raise ScenarioError(option, f"goes with a study to run (lossync reproduce NAME {option}), not with the list")
        click.echo(listing(name))
        return
    out_dir = out_dir or Path("lossync-reproduce") / (name + ("-quick" if quick else ""))
    _writable_dir("--out", out_dir)  # before any run, in the option's name (as `run` does)
    report = run_study(name, out_dir, quick=quick, engine=engine)
    click.echo(report.read_text())
    click.echo(f"wrote {out_dir}/figure.png and {report}")


@main.command(name="size-buffer")
@click.argument("scenario", required=False, type=_Path(dir_okay=False, path_type=Path))
@click.option("--capacity", default="10Gbps", show_default=True, help="Bottleneck rate (without SCENARIO).")
@click.option("--flows", "flows", multiple=True, metavar="COUNT:VARIANT:RTT", help="A flow group, e.g. 10:highspeed:80ms..260ms (repeatable; without SCENARIO).")
@click.option("--loss", "--sync", "loss", default="tcp", show_default=True,
              help="Fluid loss model (without SCENARIO): tcp (faithful, docs/fluid.md), proportional, or the paper's module: all, x=0.3, m=3, file=m.csv.")
@click.option("--duration", default=None, help="Run length (default: the scenario's; without SCENARIO 3000s fluid, 120s packet).")
@click.option("--engine", type=click.Choice(["fluid", "packet"]), default=None, help="The engine that answers (default: the scenario's, fluid).")
@click.option("--verify", is_flag=True, help="Run the packet engine at each buffer found and print its utilization beside the answer.")
@click.option("--target", "targets", multiple=True, type=float, help="Target utilization (repeatable; default 0.9 0.95 0.99).")
@click.option("--seeds", default=5, show_default=True, help="Runs per probed buffer size.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario field.")
def size_buffer_cmd(scenario, capacity, flows, loss, duration, engine, verify, targets, seeds, overrides) -> None:
    """For each target utilization, a bracket of buffers: the smallest probed whose 95% CI over the
    seeds clears the target and the largest below it that does not, narrowed by bisection only as
    far as the noise allows; beside the rule of thumb, Appenzeller's RTT·C/√n and the synchronized
    closed form."""
    from .advisor import VERIFY_DURATION_S, VERIFY_SEEDS, build_scenario, size_buffer
    from .scenario import apply_overrides, load_scenario

    if scenario:
        # The link and flows are the scenario's; an option that builds them would be ignored.
        ctx = click.get_current_context()
        for name in ("capacity", "flows", "loss"):
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
                raise ScenarioError(f"--{name}", "builds a scenario when none is given; with SCENARIO, use --set")
        doc = load_scenario(scenario)
        if duration is not None:  # the remedy the warnings below give; as `run --duration` does
            overrides = (*overrides, f'run.duration="{duration}"')
    else:
        if engine == "packet" and click.get_current_context().get_parameter_source("loss") is not click.core.ParameterSource.DEFAULT:
            raise ScenarioError("--loss", "the packet engine makes its own losses; --loss sets the fluid engine's loss model")
        doc = build_scenario(capacity, list(flows), loss, duration or ("120s" if engine == "packet" else "3000s"))
    # The advisor sets the buffer on every probe and the seed on every run (--seeds): a --set of
    # either would be overwritten without a word.
    for o in overrides:
        if o.split("=", 1)[0].strip().startswith(("dumbbell.buffer", "run.seed")):
            raise ScenarioError(f"--set {o}", "the advisor sets the buffer on every probe and the seeds with --seeds")
    apply_overrides(doc, overrides)
    try:
        table, rules = size_buffer(doc, tuple(targets) or (0.9, 0.95, 0.99), seeds=seeds, engine=engine, verify=verify,
                                   progress=lambda line: click.echo(f"  {line}", err=True), warn=False)
    except ScenarioError as e:
        if not scenario and e.field == "dumbbell.capacity":  # the scenario --capacity built
            raise ScenarioError("--capacity", e.reason) from None
        raise
    bdp = rules["bdp_pkts"]
    click.echo(f"BDP {bdp:,.0f} packets at a reference RTT of {rules['reference_rtt_s'] * 1e3:.1f} ms; {rules['flows']} flows; {seeds} seeds per probe")
    click.echo(f"answered by the {rules['engine']} engine, loss model {rules['loss_model']}"
               + (f"; checked by the packet engine with send jitter ({VERIFY_SEEDS} runs × {VERIFY_DURATION_S:g} s per answer)" if verify else "") + "\n")
    check = verify and "packet_utilization" in table
    click.echo(_bracket_table(table, seeds, check))
    for _, r in table.iterrows():
        for engine, col, runs, remedy in (("", "uncongested_runs", seeds, "lengthen --duration"),
                                          ("packet ", "packet_uncongested_runs", VERIFY_SEEDS,
                                           f"the check runs {VERIFY_DURATION_S:g} s; run --engine packet with a longer --duration")):
            if r.get(col, 0) > 0:
                where = "at the largest buffer probed" if r["note"] else "at the buffer"
                click.echo(f"  warning: {where} for U≥{r['target']:g}, {r[col]:.0f} of {runs} {engine}runs saw no "
                           "congestion event after the warm-up: the utilization describes a transient, not the "
                           f"buffer's steady state ({remedy})")
    # The runs' other warnings (outside the validated region, ...), once each; the no-congestion
    # ones are counted above.
    said = {w for ws in table["warnings"] for w in ws if not w.startswith(("run.duration: no congestion", "run.from_first_congestion"))}
    for w in sorted(said):
        click.echo(f"  warning: {w}")
    if check:
        short = table[table["packet_utilization"] < table["target"]]
        if len(short):
            click.echo(f"  warning: the packet engine does not reach the target at {len(short)} of the buffers found; "
                       "trust the packet engine's figure (docs/validation/fidelity.md)")
    click.echo("\n  rules:")
    click.echo(f"    rule of thumb RTT·C          {rules['rule_of_thumb_pkts']:>12,.0f} packets (1 BDP)")
    click.echo(f"    Appenzeller RTT·C/√n         {rules['appenzeller_pkts']:>12,.0f} packets ({1 / math.sqrt(rules['flows']):.3f} BDP)")
    g = rules["retained_gamma"]
    for t, rho in rules["closed_form"].items():
        click.echo(f"    synchronized closed form, γ={g:.3f}, U≥{t:g}: {rho * bdp:>8,.0f} packets ({rho:.4f} BDP)")
    click.echo(f"    synchronized, 100% utilization: ρ* = (1−γ)/γ = {rules['closed_form_full_utilization']:.4f} BDP")


def _bracket_table(table, seeds: int, check: bool) -> str:
    """size-buffer's answers: each target's bracket of buffers, rounded outward to what its width
    allows, the utilization (± its 95% CI) at both ends, and why the search stopped there."""
    from .stats import ci_label

    ci = lambda u, c: f"{u:.4f}" + ("" if math.isnan(c) else f" ± {c:.4f}")  # noqa: E731
    lines = [f"  {'target':>7}  {'buffer (packets)':<22}{'of BDP':<17}{'U at the top':<19}{'U below':<19}{'q delay':>9}{'loss':>10}"
             f"{'Jain':>7}" + (f"{'U packet':>10}{'diff':>8}" if check else "")]
    for _, r in table.iterrows():
        if r["note"]:
            lines.append(f"  {r['target']:>7.3f}  {r['note']}: U {ci(r['utilization'], r['utilization_ci95'])}")
            continue
        pkts = f"{r['buffer_pkts_low']:,.10g} – {r['buffer_pkts_high']:,.10g}"
        frac = f"{r['bdp_fraction_low']:.10g} – {r['bdp_fraction_high']:.10g}"
        below = "" if math.isnan(r["low_utilization"]) else ci(r["low_utilization"], r["low_ci95"])
        extra = f"{r['packet_utilization']:>10.4f}{r['packet_utilization'] - r['utilization']:>+8.3f}" if check else ""
        lines.append(f"  {r['target']:>7.3f}  {pkts:<22}{frac:<17}{ci(r['utilization'], r['utilization_ci95']):<19}{below:<19}"
                     f"{r['mean_queueing_delay_s'] * 1e3:>7.2f}ms{r['loss_rate']:>10.2e}{r['jain']:>7.3f}{extra}")
    noise = f"± the half-width of the {ci_label(seeds)} across seeds" if seeds > 1 else "one seed: no confidence interval"
    lines += ["", "  each bracket: the smallest buffer probed whose utilization clears the target and the largest below",
              f"  it that does not ({noise}), rounded outward to its width or to 2 significant",
              "  figures. The search halves the bracket and never leaves it; it stops where the two ends' intervals",
              "  overlap (stopped by noise: a buffer between them could not be told from either) or at 1% of the",
              "  buffer (stopped by resolution)."]
    stops = {}
    for _, r in table.iterrows():
        stops.setdefault(r["stopped_by"], []).append(f"{r['target']:g}")
    lines.append("  stopped by " + "; ".join(f"{why}: U≥{', '.join(ts)}" for why, ts in stops.items()))
    return "\n".join(lines)


@main.command(name="calibrate")
@click.argument("scenario", type=_Path(dir_okay=False, path_type=Path))
@click.option("--out", "out", required=True, type=_Path(dir_okay=False, path_type=Path), help="The calibration file to write (TOML).")
@click.option("--seeds", default=2, show_default=True, help="Packet and fluid runs per point (seeds 1..N).")
@click.option("--duration", "duration", default=None, type=SIM_TIME, help="Run length, e.g. 60s or 2min (default: the scenario's, and its warmup; with --duration, statistics after its first third). Doubled, at most four times, until the packet engine's utilization has agreed with runs half as long within a point twice in a row.")
@click.option("--fit-sync-rate", is_flag=True, help="After the headroom, fit the drops per loss event to the packet engine's synchronization rate too (closer at this buffer, farther at others: docs/validation/calibration.md).")
@_TIMEOUT
@_PROGRESS
def calibrate_cmd(scenario, out, seeds, duration, fit_sync_rate, timeout_s, progress) -> None:
    """Fit the fluid engine's loss process (the tcp model's burst headroom or drops per loss
    event) to short packet runs of SCENARIO (with one packet time of send jitter, the reference,
    unless the scenario sets send_jitter) and write a calibration file: name it with
    loss = { model = "tcp", calibration = "FILE" }."""
    from .calibration import calibrate

    _writable_dir("--out", out.parent)
    cal = calibrate(scenario, out, seeds=seeds, duration_s=duration, fit_sync_rate=fit_sync_rate, progress=lambda line: click.echo(f"  {line}", err=True),
                    timeout_s=timeout_s, bars=progress)
    f = cal["fitted"]
    c = cal["burst_per_sqrt_buffer"]
    burst = "default" if c is None else f"{c} ({f['burst_pkts_at_smallest_buffer']} packets at {f['smallest_buffer_pkts']:g} of buffer)"
    click.echo(f"burst_per_sqrt_buffer = {burst}, event_threshold = {cal['event_threshold']} ({f['note']})")
    click.echo(f"utilization: packet {f['packet_utilization']:.4f}, fluid {f['fluid_utilization_uncalibrated']:.4f} "
               f"uncalibrated, {f['fluid_utilization_calibrated']:.4f} calibrated; written to {out}")
    if f["packet_sync_rate"] is not None:
        rate = lambda x: "none" if x is None else f"{x:.3f}"  # noqa: E731
        click.echo(f"synchronization rate: packet {rate(f['packet_sync_rate'])}, fluid {rate(f['fluid_sync_rate_uncalibrated'])} "
                   f"uncalibrated, {rate(f['fluid_sync_rate_calibrated'])} calibrated")


@main.command(name="compare")
@click.argument("scenario", type=_Path(dir_okay=False, path_type=Path))
@click.option("--engines", default="fluid,packet:jitter", show_default=True,
              help="Comma-separated: fluid, packet, packet:jitter (the packet engine with one packet time of the slowest link "
                   "as send jitter: the fidelity matrix's reference), ns3, kernel, or fluid:MODEL (MODEL: tcp, "
                   "proportional, sync-0.3, sync-0.6, sync-1).")
@click.option("--reference", default=None, help="The engine differences are taken from (default: packet:jitter if compared, else packet, else the first).")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario field (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON (one object per engine).")
@click.option("--timeout", "timeout_s", type=SECONDS, metavar="SECONDS",
              help="Wall-time limit for the whole comparison: the engines finished by then are printed, the others marked not finished.")
@_PROGRESS
def compare_cmd(scenario: Path, engines: str, reference: str | None, overrides: tuple[str, ...], as_json: bool, timeout_s: float | None,
                progress: bool | None) -> None:
    """Run SCENARIO in several engines and print the metrics side by side, with each engine's
    difference from the reference (the packet engine, with send jitter if compared: it models
    packets, bursts and recovery, which the fluid engine approximates): the headline metrics,
    each flow group's throughput and share, and each link's utilization."""
    from .compare_text import compare_text
    from .comparison import compare, default_reference

    names = [e.strip() for e in engines.split(",")]
    if "" in names:
        raise ScenarioError("--engines", f"{engines!r}: an empty engine name (a stray comma?)")
    table = compare(scenario, names, overrides, reference=reference, progress=progress, timeout_s=timeout_s,
                    announce=lambda line: click.echo(f"lossync: {line}", err=True), warn=False)
    if as_json:
        click.echo(json.dumps({e: {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                               for e, row in table.to_dict(orient="index").items()}, indent=2))
        return
    for e in table.index:
        for w in table.loc[e, "warnings"]:
            click.echo(f"lossync: warning: [{e}] {w}", err=True)
    click.echo(compare_text(table, reference or default_reference(table.index)))


@main.group(name="kernel")
def kernel_group() -> None:
    """The kernel engine (real Linux TCP in network namespaces, root only)."""


@kernel_group.command(name="cleanup")
@click.option("--all", "all_owners", is_flag=True, help="Also namespaces of kernel runs still in progress.")
def kernel_cleanup(all_owners: bool) -> None:
    """Remove the namespaces (lsk-*), processes and temporary files a killed kernel-engine run left behind."""
    from .engines.kernel import cleanup, require_root

    require_root()
    removed = cleanup(all_owners)
    click.echo(f"removed {len(removed)} namespace(s) and temporary folder(s)" + (": " + ", ".join(removed) if removed else ""))


@main.command(name="examples")
@click.option("--copy", "copy_name", metavar="NAME", help="Copy the example NAME (and any data file it reads) into DIR, to edit it.")
@click.argument("folder", metavar="[DIR]", required=False, type=_Path(file_okay=False, path_type=Path))
def list_examples(copy_name: str | None, folder: Path | None) -> None:
    """List the shipped example scenarios and sweeps; `lossync run NAME` runs one from any folder.

    With --copy NAME, copy that example into DIR (default: the current folder) instead; an
    existing file is never overwritten."""
    from .scenario import copy_example, examples, examples_dir

    if copy_name is None:
        if folder is not None:
            raise ScenarioError("DIR", "a folder to copy into, with --copy NAME")
        for name, about in examples():
            click.echo(f"{name:<20}{about}")
        click.echo(f"\n(in {examples_dir()}; `lossync examples --copy NAME` copies one here to edit)")
        return
    for path in copy_example(copy_name, folder or Path(".")):
        click.echo(f"wrote {path}")


@main.command(name="variants")
def list_variants() -> None:
    """List the congestion-control variants."""
    for name, about in variants():
        click.echo(f"{name:<12}{about}")


@main.command(name="disciplines")
def list_disciplines() -> None:
    """List the queue disciplines (`queue = { discipline = NAME, ... }`) and the engines that run each."""
    for name, about in _core.disciplines():
        runs = [e.name for e in ENGINES.values() if name in e.capabilities.get("queues", [])]
        click.echo(f"{name:<10}{about}\n{'':<10}engines: {', '.join(runs) or 'none'}")


@main.command()
@click.option("--engine", "engines", default="fluid", show_default=True, help="Comma-separated engines: fluid, packet, ns3.")
@click.option("--duration", default=None, type=SIM_TIME,
              help="Simulated time per run, e.g. 20 or 20s (default: fluid 3000 s, packet and ns3 20 s).")
@click.option("--variants", "names", default="reno,highspeed,cubic,htcp", show_default=True, help="Fluid engine variants.")
@click.option("--loss", "losses", default="sync-0.6", show_default=True,
              help="Fluid engine: comma-separated loss models (proportional, tcp, sync-0.3, sync-0.6, sync-1), each timed on every variant.")
@click.option("--step", default=None, type=SECONDS, help="Fluid step size in seconds (default: the scenario's).")
@click.option("--capacities", default="100Mbps,1Gbps,10Gbps", show_default=True, help="Packet and ns3 engines: bottleneck capacities.")
@click.option("--ns3-wall", default=120.0, type=SECONDS, show_default=True, help="ns3: stop each run after this many wall seconds (it reports how far it got).")
@click.option("--suite", is_flag=True, help="Instead: the whole benchmark suite (packet dumbbells 1-400 Gb/s and NSFnet, fluid 10 to 10^6 flows "
              "at one and every thread, the packet cases on every core (run.scheduler = \"partitioned\"), the Fig. 9 grid, the advisor) as one Markdown table, about 15 minutes on 2 cores.")
@click.option("--quick", is_flag=True, help="With --suite: short runs (a minute or two; the figures are rougher).")
@click.option("--out", "out_file", type=_Path(dir_okay=False, path_type=Path), help="With --suite: also write the table here (e.g. docs/validation/bench.md).")
def bench(engines: str, duration: float | None, names: str, losses: str, step: float | None, capacities: str, ns3_wall: float,
          suite: bool, quick: bool, out_file: Path | None) -> None:
    """Engine speed. fluid: the paper's 10 Gbps 10-flow case per variant and loss model
    (default sync X = 0.6, the paper's).
    packet, ns3: a 10-flow Reno dumbbell (RTT 80..260 ms, buffer 25% of BDP, slow start) per
    capacity. With both, each capacity runs in ns-3 first (up to --ns3-wall), then in the packet
    engine over the same simulated span and over the whole duration, side by side.
    --suite: every engine's cost on the cases of docs/validation/bench.md, each in a fresh process
    (its own peak memory), the packet cases also on every core (the partitioned scheduler) and the
    fluid ones on one thread and on every core."""
    if suite:
        from .bench import suite as run_suite

        if out_file is not None:
            _writable_dir("--out", out_file.parent)
        table = run_suite(quick=quick, say=lambda line: click.echo(line, err=True))
        click.echo(table)
        if out_file is not None:
            from .io import atomic_write

            atomic_write(out_file, lambda tmp: tmp.write_text(BENCH_HEADER + table))
        return
    if quick or out_file is not None:
        raise ScenarioError("--quick" if quick else "--out", "goes with --suite")
    chosen = engines.split(",")
    for engine in chosen:
        if engine not in ("fluid", "packet", "ns3"):
            raise ScenarioError("--engine", f"unknown engine {engine!r} (fluid, packet, ns3)")
    if "ns3" in chosen:
        from .engines.ns3 import ns3_root

        try:
            ns3_root()
        except LossyncError as e:  # run what can run, say what was skipped
            click.echo(f"lossync: skipped ns3: {e}", err=True)
            chosen.remove("ns3")
    # Every scenario is checked before the first line of a table.
    packet_docs = _packet_bench_docs(capacities.split(","), duration or 20.0) if "packet" in chosen or "ns3" in chosen else {}
    if "fluid" in chosen:
        from .comparison import FLUID_MODELS
        from .scenario import apply_overrides, load_scenario

        models = losses.split(",")
        for m in models:
            if m not in FLUID_MODELS:
                raise ScenarioError("--loss", f"unknown loss model {m!r} ({', '.join(FLUID_MODELS)})")
        base = default_scenario_path()

        def fluid_doc(name: str, m: str) -> dict:
            ov = [f"run.duration={duration or 3000}", f'flows.0.cc="{name}"', "run.record_interval=1.0"]
            if step:
                ov.append(f"run.step={step}")
            doc = apply_overrides(load_scenario(base), ov)
            # The loss model replaces the scenario's, keeping its drop policy for `sync`.
            doc["loss"] = {**FLUID_MODELS[m], **({"policy": doc["loss"]["policy"]} if m.startswith("sync") else {})}
            return doc

        docs = {(name, m): _bench_doc(fluid_doc(name, m)) for name in names.split(",") for m in models}
        click.echo(f"fluid engine\n{'variant':<12}{'loss':<14}{'sim s':>8}{'wall s':>9}{'flow-updates/s':>17}{'ns/flow-update':>16}"
                   f"{'sim s / wall s':>16}")
        for (name, m), doc in docs.items():
            t0 = time.perf_counter()
            r = run_scenario(doc, progress=False, warn=False)
            wall = time.perf_counter() - t0
            s = r.summary
            click.echo(f"{name:<12}{m:<14}{s['duration_s']:>8.0f}{wall:>9.3f}{s['flow_updates'] / wall:>17.3e}"
                       f"{1e9 * wall / s['flow_updates']:>16.1f}{s['duration_s'] / wall:>16.0f}")
    if packet_docs:
        _bench_packet_level(packet_docs, duration or 20.0, "packet" in chosen, "ns3" in chosen, ns3_wall)


#: The bench option each scenario field comes from, to name in an error.
_BENCH_OPTIONS = {"run.duration": "--duration", "run.step": "--step", "flows": "--variants", "dumbbell.capacity": "--capacities"}


def _bench_doc(doc: dict) -> Prepared:
    """`doc` checked before the table starts; an error names the option the value came from."""
    try:
        return prepare(doc)
    except ScenarioError as e:
        option = next((o for f, o in _BENCH_OPTIONS.items() if e.field.startswith(f)), e.field)
        raise ScenarioError(option, e.reason if option == e.field else f"{e.field}: {e.reason}") from None


def _packet_bench_docs(capacities: list[str], duration: float) -> dict[str, dict]:
    """The packet-level bench's dumbbell at each capacity, checked."""
    docs = {capacity: {
        "dumbbell": {"capacity": capacity, "buffer": {"bdp_fraction": 0.25}},
        "flows": [{"count": 10, "cc": "reno", "rtt": "80ms..260ms", "slow_start": True}],
        "run": {"duration": duration, "record_interval": 0.1},
    } for capacity in capacities}
    for doc in docs.values():
        _bench_doc(dict(doc, engine="packet"))
    return docs


def _bench_packet_level(docs: dict[str, dict], duration: float, packet: bool, ns3: bool, ns3_wall: float) -> None:
    """Packets per wall second (arrivals at the bottleneck), scheduler events per wall second and
    simulated seconds per wall second of the packet engine and ns-3 on the same dumbbell."""
    click.echo(f"{'capacity':<9}{'engine':<8}{'sim s':>8}{'wall s':>9}{'data pkts':>12}{'pkts/s':>11}{'events/s':>11}"
               f"{'sim s/wall s':>14}{'util':>7}")

    def row(capacity: str, engine: str, sim_s: float, wall: float, pkts: float, events: float, util: float) -> None:
        click.echo(f"{capacity:<9}{engine:<8}{sim_s:>8.2f}{wall:>9.2f}{pkts:>12.4g}{pkts / wall:>11.4g}{events / wall:>11.4g}"
                   f"{sim_s / wall:>14.3g}{util:>7.3f}")

    def packet_run(doc: dict, capacity: str, label: str) -> float:
        t0 = time.perf_counter()
        r = run_scenario(dict(doc, engine="packet"), progress=False, warn=False)
        wall = time.perf_counter() - t0
        s = r.summary
        pkts = s["links"][0]["arrivals_pkts"]
        row(capacity, label, s["duration_s"], wall, pkts, s["flow_updates"], s["utilization"])
        return pkts / wall

    for capacity, doc in docs.items():
        ns3_rate = None
        if ns3:
            from .engines.ns3 import run_ns3_with_stats

            r, st = run_ns3_with_stats(doc, wall_limit_s=ns3_wall)
            pkts = r.summary["links"][0]["arrivals_pkts"]
            row(capacity, "ns3", st.sim_s, st.wall_s, pkts, st.events, r.summary["utilization"])
            ns3_rate = pkts / st.wall_s
            if packet and st.sim_s < duration - 1e-9:
                # The same span as ns-3 managed, then the whole run.
                span = dict(doc, run=dict(doc["run"], duration=st.sim_s, record_interval=min(0.1, st.sim_s / 10)))
                rate = packet_run(span, capacity, "packet")
                click.echo(f"{'':<9}packet engine / ns-3, data packets per wall second, same span: {rate / ns3_rate:,.0f}x")
        if packet:
            rate = packet_run(doc, capacity, "packet")
            if ns3_rate:
                click.echo(f"{'':<9}packet engine / ns-3, data packets per wall second: {rate / ns3_rate:,.0f}x")


for _command in (summarize, plot, report_cmd):  # cli_results.py: the commands that read results
    main.add_command(_command)

if __name__ == "__main__":
    main()
