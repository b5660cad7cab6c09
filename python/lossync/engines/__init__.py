"""Engines: `lossync.run(scenario) -> Result` on the engine the scenario names.

Every engine is an `Engine` (engines/registry.py: name, capabilities, `run`, `check`, `estimate`) in
`ENGINES`. The fluid and packet engines live in the Rust core (engines/core.py lists them from the
binding and drives them); ns-3 is a C++ program built and run by engines/ns3/; the kernel engine
runs Linux TCP in network namespaces (engines/kernel/, root only). A new engine outside the core
is a folder here with an `ENGINE`, and one line below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import _core
from ..errors import ScenarioError, emit_warnings
from ..progress import Deadline
from ..results import Result
from ..scenario import Prepared, ScenarioLike, in_user_terms, prepare
from . import kernel, ns3
from .core import PCAP_PACKETS, Pcap, core_engines
from .registry import ENGINES, Engine, lookup, refuse_beyond, registry_json

for _engine in (
    *core_engines(),
    ns3.ENGINE,
    kernel.ENGINE,
):
    ENGINES[_engine.name] = _engine
# The core's own checks then name every engine with a capability a scenario asks, not only its own.
_core.set_registry(registry_json())


def run(
    scenario: ScenarioLike | Prepared,
    overrides: list[str] | tuple[str, ...] = (),
    progress: bool | None = None,
    base_dir: str | Path | None = None,
    force: bool = False,
    warn: bool = True,
    timeout_s: float | None = None,
    pcap: str | None = None,
    pcap_file: str | Path | None = None,
    pcap_packets: int = PCAP_PACKETS,
) -> Result:
    """Runs a scenario (a TOML file name or a dict) and returns its Result.

    overrides: `path.to.field=value` strings applied before validation.
    progress: show a progress bar; default: when stderr is a terminal or in a notebook.
    base_dir: where relative file names in a dict scenario resolve (default: the working directory).
    force: run a kernel-engine capacity above this machine's clean limit (docs/kernel.md; the
    summary warns); the other engines have no such limit.
    warn: also emit each of `Result.warnings` as a `LossyncWarning`, so that a caller who reads
    only the numbers still hears why they may be wrong. Callers that report the warnings
    themselves (the command line, sweep rows, `compare`) turn it off.
    timeout_s: a wall-time limit in seconds: the run stops by then (give or take a quarter of a
    second, a millisecond of simulated time in ns-3) and returns the part simulated, marked
    partial (`summary["partial"]`, a warning saying how far it got); RunTimeout if nothing was.
    pcap: the name of a link whose packets to write as a pcap file (packet engine; both
    directions where the scenario models the other), to `pcap_file` (default `<link>.pcap`),
    the first `pcap_packets` of them; `summary["pcap"]` says what the file holds
    (docs/packet.md, "Packet traces").
    """
    deadline = Deadline(timeout_s)  # a bad limit is refused before anything runs
    p = prepare(scenario, overrides, base_dir)  # read and resolved once for the whole run
    engine = lookup(p.engine)
    trace = _pcap(engine, pcap, pcap_file, pcap_packets)
    try:
        refuse_beyond(p, engine.name)
        result = engine.run(p, progress, force, deadline.remaining_s(), **({"pcap": trace} if trace else {}))
    except ScenarioError as e:  # engines name resolved links; say what the user wrote
        raise in_user_terms(e, p.doc) from None
    if warn:
        emit_warnings(result.warnings)  # blamed on the caller's line
    return result


def estimate_wall_s(scenario: ScenarioLike | Prepared, overrides: list[str] | tuple[str, ...] = (), base_dir: str | Path | None = None,
                    force: bool = False) -> float:
    """A rough wall time of the run, in seconds, from its engine's typical speed (each engine's
    `estimate`: docs/scenario.md, "Progress and time limits"); a progress bar gives the live one.
    A scenario its engine refuses is refused here first (ScenarioError, as `run` and `check`
    say it), so that no estimate is said of a run that will not start."""
    p = prepare(scenario, overrides, base_dir)
    engine = lookup(p.engine)
    try:
        refuse_beyond(p, engine.name)
        engine.check(p, force)
    except ScenarioError as e:  # in the user's terms, as `run` says it
        raise in_user_terms(e, p.doc) from None
    return engine.estimate(p.resolved)


def _pcap(engine: Engine, link: str | None, file: str | Path | None, packets: int) -> Pcap | None:
    """The trace asked for, checked: the packet engine only, a link name, a positive cap."""
    if link is None:
        if file is not None:
            raise ScenarioError("pcap_file", "needs pcap, the link to trace")
        if packets != PCAP_PACKETS:
            raise ScenarioError("pcap_packets", "needs pcap, the link to trace")
        return None
    if engine.name != "packet":
        raise ScenarioError("pcap", f"a packet trace needs the packet engine (engine = \"packet\"); this scenario runs on {engine.name}")
    if not isinstance(link, str) or not link:
        raise ScenarioError("pcap", f"must be a link's name, not {link!r}")
    if isinstance(packets, bool) or not isinstance(packets, int) or packets < 1:
        raise ScenarioError("pcap_packets", f"must be a whole number of packets, at least 1, not {packets!r}")
    return Pcap(link, Path(file) if file is not None else Path(f"{link}.pcap"), packets)


def check(scenario: ScenarioLike | Prepared, overrides: list[str] | tuple[str, ...] = (), force: bool = False) -> dict[str, Any]:
    """Checks that the engine the scenario names can run it, refusing what `run` refuses before
    it starts (ScenarioError naming the field, in the user's terms), and returns it resolved."""
    p = prepare(scenario, overrides)  # the core's engines check here
    engine = lookup(p.engine)
    try:
        refuse_beyond(p, engine.name)
        engine.check(p, force)
    except ScenarioError as e:
        raise in_user_terms(e, p.doc) from None
    return p.resolved


__all__ = ["ENGINES", "PCAP_PACKETS", "Engine", "Pcap", "Prepared", "Result", "check", "estimate_wall_s", "prepare", "run"]
