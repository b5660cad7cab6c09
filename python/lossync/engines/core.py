"""The engines in the Rust core, `fluid` and `packet`: one `Simulation` advanced in chunks of
simulated time, so that the GIL is released within a chunk and Ctrl-C and the progress bar are
served between chunks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import _core
from ..results import Result

#: Simulated-time chunks per run.
CHUNKS = 200


def run_core(text: str, base_dir: str | Path, progress: bool | None = None) -> Result:
    """Runs a scenario (JSON text) on the engine it names; relative file names resolve against
    `base_dir`."""
    sim = _core.Simulation(text, "json", str(base_dir))
    duration = sim.duration_s
    if progress is None:
        progress = sys.stderr.isatty()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=round(duration, 6), unit="sim s", leave=False, desc="simulating")
    try:
        for k in range(1, CHUNKS + 1):
            sim.advance(duration * k / CHUNKS)
            if bar is not None:
                bar.update(round(sim.now_s - bar.n, 6))
    finally:
        if bar is not None:
            bar.close()
    drops = sim.drops()
    return Result.from_core(sim.finish(), json.loads(sim.resolved), drops)
