"""One scenario in several engines (and fluid loss models), metrics side by side with their
differences from a reference: `lossync.compare(scenario, engines=["fluid", "packet:jitter"])`
(the default, as `lossync compare`'s).

The packet engine is the reference for the fluid engine: it models what a fluid cannot (packets,
bursts, recovery). `packet:jitter` is the packet engine with Floyd & Jacobson's random processing
time (each packet waits up to one packet time of the slowest link before it is sent), which breaks
the phase effects of a deterministic simulator; it is the fidelity matrix's reference
(docs/validation/fidelity.md). Every engine's summary comes from the same metrics code, so a
difference is a difference of physics, not of definitions; and every engine's link metrics
(utilization, loss rate, sync rate, mean queue) are those of one link, the reference's headline
link (`bottleneck`), so that a difference is never one link's number minus another's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from .engines import ENGINES, estimate_wall_s, run
from .errors import ScenarioError, emit_warnings
from .progress import Deadline, RunTimeout, duration_text
from .scenario import ScenarioLike, find_scenario, load_scenario, prepare

#: Scalar metrics compared.
COMPARED = ["utilization", "jain", "loss_rate", "sync_rate_mean", "mean_queue_pkts"]
#: Of those, the link's: every engine's are read from one link, `bottleneck` (a summary's own
#: headline link is the one with the most drops and marks, which engines may pick differently).
LINK_COMPARED = ["utilization", "loss_rate", "sync_rate_mean", "mean_queue_pkts"]

#: Fluid loss models a comparison can name as `fluid:<model>`.
FLUID_MODELS: dict[str, dict[str, Any]] = {
    "proportional": {"model": "proportional"},
    "tcp": {"model": "tcp"},
    "sync-0.3": {"model": "sync", "sync": {"kind": "normal", "x": 0.3}},
    "sync-0.6": {"model": "sync", "sync": {"kind": "normal", "x": 0.6}},
    "sync-1": {"model": "sync", "sync": {"kind": "all"}},
    # The same with the recovery pause (docs/fluid.md, "Recovery pause").
    "sync-0.3-pause": {"model": "sync", "sync": {"kind": "normal", "x": 0.3}, "recovery_pause": True},
    "sync-0.6-pause": {"model": "sync", "sync": {"kind": "normal", "x": 0.6}, "recovery_pause": True},
    "sync-1-pause": {"model": "sync", "sync": {"kind": "all"}, "recovery_pause": True},
}


#: The largest `send_jitter` a flow group takes (scenario validation).
MAX_SEND_JITTER_S = 1.0


def with_send_jitter(doc: dict[str, Any], overrides: list[str] | tuple[str, ...] = (),
                     base_dir: str | Path | None = None) -> dict[str, Any]:
    """`doc` with `overrides` applied, then every flow group that sets no `send_jitter` given one
    packet time of the scenario's slowest link (its bottleneck on a dumbbell): Floyd & Jacobson's
    remedy for phase effects ("On traffic phase effects in packet-switched gateways", 1992: a
    random processing time of up to one bottleneck packet time; ns-2's `overhead_`). Run the
    result without the overrides: applied again, one that replaces a flow group would drop its
    jitter. The fluid engine ignores it."""
    p = prepare(doc, overrides, base_dir)
    doc, links = p.doc, p.resolved["links"]
    jitter_s = max(8 * li["packet_size_bytes"] / li["capacity_bps"] for li in links)
    if jitter_s > MAX_SEND_JITTER_S:
        raise ScenarioError("engines", f"packet:jitter: one packet time of the slowest link is {jitter_s:g} s, more than "
                                       f"send_jitter's {MAX_SEND_JITTER_S:g} s; set flows[].send_jitter yourself")
    return dict(doc, flows=[g if "send_jitter" in g else dict(g, send_jitter=jitter_s) for g in doc.get("flows", [])])


def default_reference(engines: list[str] | pd.Index) -> str:
    """The engine differences are taken from: the jittered packet engine, else the packet engine,
    else the first."""
    return next((e for e in ("packet:jitter", "packet") if e in engines), list(engines)[0])


def variant_shares(summary: dict[str, Any]) -> dict[str, float]:
    """Each variant's share of the total throughput."""
    tput: dict[str, float] = {}
    for f in summary["flows"]:
        tput[f["variant"]] = tput.get(f["variant"], 0.0) + f["throughput_pps"]
    total = sum(tput.values())
    return {v: (t / total if total > 0 else float("nan")) for v, t in tput.items()}


def group_throughputs(summary: dict[str, Any]) -> dict[str, float]:
    """Each flow group's throughput in b/s (the sum over its flows), by its name."""
    tput: dict[str, float] = {}
    for f in summary["flows"]:
        tput[f["group"]] = tput.get(f["group"], 0.0) + f["throughput_bps"]
    return tput


#: Column prefixes of the per-group and per-link figures: `group.<name>.throughput_bps`,
#: `group.<name>.share` (of the total throughput), `link.<name>.utilization`.
PER_GROUP, PER_LINK = "group.", "link."


def _row(name: str, summary: dict[str, Any], bottleneck: str) -> dict[str, Any]:
    """An engine's row, its link metrics (`LINK_COMPARED`) those of the link named `bottleneck`."""
    row: dict[str, Any] = {"engine": name, "bottleneck": bottleneck}
    link = next((li for li in summary["links"] if li["name"] == bottleneck), {})  # {}: an engine without it
    for m in COMPARED:
        v = (link if m in LINK_COMPARED else summary).get(m)
        row[m] = float("nan") if v is None else float(v)
    for v, s in variant_shares(summary).items():
        row[f"share.{v}"] = s
    groups = group_throughputs(summary)
    total = sum(groups.values())
    for g, t in groups.items():
        row[f"{PER_GROUP}{g}.throughput_bps"] = t
        row[f"{PER_GROUP}{g}.share"] = t / total if total > 0 else float("nan")
    for link in summary["links"]:
        row[f"{PER_LINK}{link['name']}.utilization"] = float(link["utilization"])
    row["warnings"] = list(summary.get("warnings", []))  # why a number may be wrong, per engine
    row["finished"], row["status"] = True, "finished"
    return row


def _unfinished(name: str, why: str) -> dict[str, Any]:
    return {"engine": name, "warnings": [], "finished": False, "status": f"not finished: {why}"}


def _numeric(c: str) -> bool:
    return c in COMPARED or c.startswith(("share.", PER_GROUP, PER_LINK))


def compare(
    scenario: ScenarioLike,
    engines: list[str] | tuple[str, ...] = ("fluid", "packet:jitter"),
    overrides: list[str] | tuple[str, ...] = (),
    base_dir: str | Path | None = None,
    reference: str | None = None,
    *,
    progress: bool | None = None,
    timeout_s: float | None = None,
    announce: Callable[[str], None] | None = None,
    warn: bool = True,
) -> pd.DataFrame:
    """Runs `scenario` in each of `engines` ("fluid", "packet", "packet:jitter", "ns3", or
    "fluid:<model>" with a model of `FLUID_MODELS`) and returns one row per engine: the metrics of
    `COMPARED` (the link's of them, `LINK_COMPARED`, all of one link, `bottleneck`: the reference's
    headline link), each variant's throughput share (`share.<variant>`), each flow group's throughput
    and share (`group.<name>.throughput_bps`, `group.<name>.share`), each link's utilization
    (`link.<name>.utilization`), `d.<column>`, the difference from the reference engine's row
    (default: `default_reference`), `warnings`, the run's reasons its numbers may be wrong
    (outside the validated region, no congestion seen), and `finished` / `status`.

    progress: each run's bar (None: where someone watches, `progress.watched`).
    timeout_s: a wall-time limit for the whole comparison: an engine it stops, or never starts, is
    a row with `finished` false, its numbers NaN and `status` saying how far it got.
    announce: called with a line before the runs (what they will take, roughly: each engine's
    `estimate`) and before each run.
    warn: also emit each engine's warnings as a `LossyncWarning` naming the engine (the command
    line, which prints its own, turns it off)."""
    deadline = Deadline(timeout_s)
    say = announce or (lambda _line: None)
    doc = load_scenario(scenario) if isinstance(scenario, (str, Path)) else dict(scenario)
    if isinstance(scenario, (str, Path)) and base_dir is None:
        base_dir = find_scenario(scenario).resolve().parent
    if not engines:
        raise ScenarioError("engines", "name at least one engine")
    twice = [e for e, n in Counter(engines).items() if n > 1]
    if twice:  # its rows and columns would collide
        raise ScenarioError("engines", f"{twice[0]!r} is named twice")
    specs = {name: _engine_of(name) for name in engines}  # every name checked before the first run
    ref = reference or default_reference(engines)
    if ref not in engines:
        raise ScenarioError("reference", f"{ref!r} is not one of the engines compared ({', '.join(engines)})")
    runs = {}
    for name in engines:
        engine, model = specs[name]
        d, more = dict(doc, engine=engine), list(overrides)
        if name == "packet:jitter":
            d, more = with_send_jitter(d, overrides, base_dir), []
        elif model:
            d["loss"] = FLUID_MODELS[model]
        runs[name] = (d, more)
    # Each engine's scenario read and resolved once, for its estimate and its run.
    prepared = {name: prepare(d, more, base_dir) for name, (d, more) in runs.items()}
    estimates = {name: estimate_wall_s(p) for name, p in prepared.items()}
    simulated = prepared[engines[0]].resolved["run"]["duration_s"]
    say(f"compare: {len(engines)} engines, {simulated:g} s simulated each; estimated {duration_text(sum(estimates.values()))} in all "
        f"({', '.join(f'{n} {duration_text(t)}' for n, t in estimates.items())}; rough, from each engine's typical speed)"
        + (f"; --timeout {timeout_s:g} s" if timeout_s is not None else ""))
    rows, summaries = {}, {}
    for k, name in enumerate(engines, 1):
        if deadline.expired():
            rows[name] = _unfinished(name, "not started (the wall-time limit ran out)")
            continue
        say(f"compare: [{k}/{len(engines)}] {name}, estimated {duration_text(estimates[name])}")
        try:
            r = run(prepared[name], progress=progress, warn=False, timeout_s=deadline.remaining_s())
        except RunTimeout as e:
            rows[name] = _unfinished(name, str(e).removeprefix("timeout: "))
            continue
        if r.summary["partial"]:
            rows[name] = _unfinished(name, f"stopped at {r.summary['duration_s']:.6g} of {simulated:g} s simulated")
            continue
        summaries[name] = r.summary
    # One link for every engine's link metrics: the reference's headline link (else the first
    # finished engine's), so that a difference is never one link's number minus another's.
    first = ref if ref in summaries else next(iter(summaries), None)
    for name, summary in summaries.items():
        rows[name] = _row(name, summary, summaries[first]["bottleneck"])
    df = pd.DataFrame([rows[name] for name in engines]).set_index("engine")
    numeric = [c for c in df.columns if _numeric(c)]
    df[numeric] = df[numeric].astype(float)
    for c in numeric:
        df[f"d.{c}"] = df[c] - df.loc[ref, c]
    if warn:
        emit_warnings(f"{name}: {w}" for name, ws in df["warnings"].items() for w in ws)
    return df


def _engine_of(name: str) -> tuple[str, str]:
    """(engine, fluid loss model or "") of an engine name of `compare`, or the error naming it."""
    engine, colon, model = name.partition(":")
    if engine not in ENGINES:
        raise ScenarioError("engines", f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if colon and name != "packet:jitter":
        if engine != "fluid":
            raise ScenarioError("engines", f"unknown engine {name!r} (known: {', '.join(ENGINES)}, packet:jitter, fluid:MODEL)")
        if model not in FLUID_MODELS:
            raise ScenarioError("engines", f"unknown fluid loss model {name!r} (known: {', '.join('fluid:' + m for m in FLUID_MODELS)})")
    return engine, "" if name == "packet:jitter" else model


def relative_share_error(row: pd.Series, ref: pd.Series) -> float:
    """The largest relative error of a variant's throughput share against the reference."""
    errs = [abs(row[c] / ref[c] - 1.0) for c in row.index if c.startswith("share.") and ref.get(c, 0) > 0]
    return float(max(errs)) if errs else float("nan")


__all__ = ["COMPARED", "FLUID_MODELS", "LINK_COMPARED", "PER_GROUP", "PER_LINK", "compare", "default_reference", "group_throughputs", "relative_share_error",
           "variant_shares", "with_send_jitter"]
