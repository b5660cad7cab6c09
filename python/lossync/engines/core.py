"""The engines in the Rust core, `fluid` and `packet`: one `Simulation` advanced in chunks of
simulated time sized to take about a quarter of a second of wall time each, so that the GIL is
released within a chunk and Ctrl-C and the progress bar are served between chunks whatever the
engine's speed. Results do not depend on where the run is cut (tests/test_api.py)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import LossyncError
from ..results import Result
from ..scenario import ScenarioLike, to_core
from .registry import Engine

#: Wall time per chunk: Ctrl-C is answered within about this long.
CHUNK_WALL_S = 0.25
#: The first chunk's share of the run, before its speed is known.
FIRST_CHUNK = 1e-6
#: A packet trace keeps at most this many packets unless told otherwise: about 60 MB of pcap.
PCAP_PACKETS = 1_000_000


@dataclass(frozen=True)
class Pcap:
    """A packet trace to write: the packets crossing `link` (both its directions, where the
    scenario models the other), the first `packets` of them, to `file` (docs/packet.md, "Packet traces")."""

    link: str
    file: Path
    packets: int = PCAP_PACKETS


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; `result` holds the metrics of the part simulated, marked partial
    (`summary["partial"]` is true and a warning says how far it got), or of the whole run if the
    interrupt came after its last step (`summary["partial"]` false)."""

    def __init__(self, result: Result) -> None:
        super().__init__()
        self.result = result


def run_core(text: str, base_dir: str | Path, progress: bool | None = None, pcap: Pcap | None = None) -> Result:
    """Runs a scenario (JSON text) on the engine it names; relative file names resolve against
    `base_dir`. With `pcap`, writes that packet trace and describes it in `summary["pcap"]`.
    Ctrl-C raises `Interrupted` with the partial result (or a plain KeyboardInterrupt if nothing
    was measured yet)."""
    sim = _core.Simulation(text, "json", str(base_dir))
    if pcap is not None:
        sim.trace_link(pcap.link, pcap.packets)
    duration = sim.duration_s
    if progress is None:
        progress = sys.stderr.isatty()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=round(duration, 6), unit="sim s", leave=False, desc="simulating")
    step = duration * FIRST_CHUNK
    until = 0.0
    try:
        # On `until`, not the engine's clock: a step that does not divide the duration leaves
        # the clock a fraction of a step short of it.
        while until < duration:
            until = min(duration, until + step)
            started = time.perf_counter()
            sim.advance(until)
            wall = time.perf_counter() - started
            # Aim the next chunk at CHUNK_WALL_S, at most doubling it at a time.
            step *= min(2.0, max(0.25, CHUNK_WALL_S / max(wall, 1e-6)))
            if bar is not None:
                bar.update(round(sim.now_s - bar.n, 6))
    except KeyboardInterrupt:
        so_far = _result_so_far(sim, duration, pcap)
        if so_far is None:
            raise
        raise Interrupted(so_far) from None
    finally:
        if bar is not None:
            bar.close()
    traced = _write_pcap(sim, pcap)
    drops = sim.drops()
    finished = sim.finish()
    result = Result.from_core(finished, json.loads(sim.resolved), drops, sim.fct())
    if traced is not None:
        result.summary["pcap"] = traced
    return result


def _write_pcap(sim: _core.Simulation, pcap: Pcap | None) -> dict[str, Any] | None:
    """Writes the trace (whole or not at all), and says what it holds: the link, the file, the
    packets written and those that crossed the link, and whether the cap left some out."""
    if pcap is None:
        return None
    from ..io import atomic_write

    counts: list[tuple[int, int]] = []
    pcap.file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(pcap.file, lambda tmp: counts.append(sim.write_pcap(str(tmp))))
    written, seen = counts[0]
    return {"link": pcap.link, "file": str(pcap.file), "packets": written, "crossed": seen,
            "capped": seen > written, "max_packets": pcap.packets}


def _result_so_far(sim: _core.Simulation, duration: float, pcap: Pcap | None = None) -> Result | None:
    """The result of what was simulated before a Ctrl-C: marked partial, unless the interrupt came
    after the last step (then the run is whole, and says nothing of an interruption)."""
    now, done = sim.now_s, sim.done
    try:
        traced = _write_pcap(sim, pcap)
        drops = sim.drops()
        finished = sim.finish()
        result = Result.from_core(finished, json.loads(sim.resolved), drops, sim.fct())
        if traced is not None:
            result.summary["pcap"] = traced
    except LossyncError:
        return None
    if done:
        return result
    result.summary["partial"] = True
    result.summary.setdefault("warnings", []).append(
        f"interrupted: {now:g} s of {duration:g} s simulated; every metric covers the part simulated only")
    return result


def _engine_run(scenario: ScenarioLike, overrides, base_dir, progress, force, pcap: Pcap | None = None) -> Result:
    text, base = to_core(scenario, overrides, base_dir)
    return run_core(text, base, progress, pcap)


def _engine_check(sc: dict, force: bool) -> None:
    """Nothing beyond resolution: `_core.resolve` runs the core engine's own check."""


def core_engines() -> list[Engine]:
    """The core's engines, as its registry lists them (`_core.engines()`)."""
    return [Engine(name=e["name"], about=e["about"], capabilities=e["capabilities"], run=_engine_run, check=_engine_check)
            for e in json.loads(_core.engines())]
