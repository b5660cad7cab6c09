"""The engines in the Rust core, `fluid` and `packet`: one `Simulation` advanced in chunks of
simulated time sized to take about a quarter of a second of wall time each, so that the GIL is
released within a chunk and Ctrl-C and the progress bar are served between chunks whatever the
engine's speed. Results do not depend on where the run is cut (tests/test_api.py)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .. import _core
from ..errors import LossyncError
from ..results import Result
from ..scenario import ScenarioLike, to_core
from .registry import Engine

#: Wall time per chunk: Ctrl-C is answered within about this long.
CHUNK_WALL_S = 0.25
#: The first chunk's share of the run, before its speed is known.
FIRST_CHUNK = 1e-6


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; `result` holds the metrics of the part simulated, marked partial
    (`summary["partial"]` is true and a warning says how far it got), or of the whole run if the
    interrupt came after its last step (`summary["partial"]` false)."""

    def __init__(self, result: Result) -> None:
        super().__init__()
        self.result = result


def run_core(text: str, base_dir: str | Path, progress: bool | None = None) -> Result:
    """Runs a scenario (JSON text) on the engine it names; relative file names resolve against
    `base_dir`. Ctrl-C raises `Interrupted` with the partial result (or a plain
    KeyboardInterrupt if nothing was measured yet)."""
    sim = _core.Simulation(text, "json", str(base_dir))
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
        so_far = _result_so_far(sim, duration)
        if so_far is None:
            raise
        raise Interrupted(so_far) from None
    finally:
        if bar is not None:
            bar.close()
    drops = sim.drops()
    finished = sim.finish()
    return Result.from_core(finished, json.loads(sim.resolved), drops, sim.fct())


def _result_so_far(sim: _core.Simulation, duration: float) -> Result | None:
    """The result of what was simulated before a Ctrl-C: marked partial, unless the interrupt came
    after the last step (then the run is whole, and says nothing of an interruption)."""
    now, done = sim.now_s, sim.done
    try:
        drops = sim.drops()
        finished = sim.finish()
        result = Result.from_core(finished, json.loads(sim.resolved), drops, sim.fct())
    except LossyncError:
        return None
    if done:
        return result
    result.summary["partial"] = True
    result.summary.setdefault("warnings", []).append(
        f"interrupted: {now:g} s of {duration:g} s simulated; every metric covers the part simulated only")
    return result


def _engine_run(scenario: ScenarioLike, overrides, base_dir, progress, force) -> Result:
    text, base = to_core(scenario, overrides, base_dir)
    return run_core(text, base, progress)


def _engine_check(sc: dict, force: bool) -> None:
    """Nothing beyond resolution: `_core.resolve` runs the core engine's own check."""


def core_engines() -> list[Engine]:
    """The core's engines, as its registry lists them (`_core.engines()`)."""
    return [Engine(name=e["name"], about=e["about"], capabilities=e["capabilities"], run=_engine_run, check=_engine_check)
            for e in json.loads(_core.engines())]
