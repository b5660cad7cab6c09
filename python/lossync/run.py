"""Running a scenario: `lossync.run(scenario) -> Result`."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from . import _core
from .scenario import ScenarioLike, to_core

#: Simulated-time chunks per run: the GIL is released within a chunk, Ctrl-C and the progress bar
#: are served between chunks.
CHUNKS = 200
EVENT_COLUMNS = ["link", "start_s", "candidates", "signalled", "lost"]


@dataclass
class Result:
    """The outcome of one run.

    summary: the headline metrics and per-link / per-flow tables, as a dict (see docs/metrics.md).
    series: time series, one row per recording instant: `time_s`, `queue_pkts.<link>`,
        `utilization.<link>`, `cwnd_pkts.<flow>`, `rate_pps.<flow>`.
    events: one row per congestion event in the measurement window: `link`, `start_s`,
        `candidates` (flows that could lose), `signalled` (flows the synchronization module
        signalled: m_k plus any spill; 0 in proportional mode), `lost` (flows that lost packets).
    scenario: the resolved scenario (every default filled in).
    """

    summary: dict[str, Any]
    series: pd.DataFrame
    events: pd.DataFrame
    scenario: dict[str, Any] = field(repr=False)
    #: Bottleneck drops (`time_s`, `flow`), packet engine only (at most 4 million are logged).
    drops: pd.DataFrame = field(default_factory=lambda: pd.DataFrame({"time_s": [], "flow": []}), repr=False)

    def sync_distribution(self) -> pd.DataFrame:
        """The measured distribution of m_k (flows that lost per congestion event) at the
        headline link, as `m,count`: the CSV form the fluid engine's empirical synchronization
        controller reads (`loss.sync = { kind = "empirical", file = … }`)."""
        link = next(l for l in self.summary["links"] if l["name"] == self.summary["bottleneck"])
        hist = link["sync_histogram"]
        return pd.DataFrame([{"m": m, "count": n} for m, n in enumerate(hist) if m >= 1 and n > 0], columns=["m", "count"])

    @property
    def flows(self) -> pd.DataFrame:
        """Per-flow metrics, one row per flow."""
        return pd.DataFrame(self.summary["flows"]).set_index("flow")

    @property
    def links(self) -> pd.DataFrame:
        """Per-link metrics, one row per link."""
        return pd.DataFrame(self.summary["links"]).set_index("name")

    def provenance(self) -> dict[str, Any]:
        return {
            "lossync_version": _core.__version__,
            "seed": self.summary["seed"],
            "scenario": self.scenario,
        }

    def write(self, out_dir: str | Path, figure: bool = True) -> list[Path]:
        """Writes summary.json (with the resolved scenario for provenance), series.parquet,
        events.csv and figure.png into `out_dir`. Each file is written under a temporary name and renamed when
        complete, so an interrupted write leaves no partial file."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        doc = dict(self.summary, provenance=self.provenance())
        written.append(_atomic(out / "summary.json", lambda p: p.write_text(json.dumps(doc, indent=2) + "\n")))
        written.append(_atomic(out / "series.parquet", lambda p: self.series.to_parquet(p, index=False)))
        written.append(_atomic(out / "events.csv", lambda p: self.events.to_csv(p, index=False)))
        if figure:
            from .plot import figure as make_figure

            fig = make_figure(self)
            written.append(_atomic(out / "figure.png", lambda p: fig.savefig(p, dpi=120, format="png")))
        return written


def _atomic(path: Path, write: Callable[[Path], Any]) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def run(
    scenario: ScenarioLike,
    overrides: list[str] | tuple[str, ...] = (),
    progress: bool | None = None,
    base_dir: str | Path | None = None,
) -> Result:
    """Runs a scenario (a TOML file name or a dict) and returns its Result.

    overrides: `path.to.field=value` strings applied before validation.
    progress: show a progress bar; default: when stderr is a terminal.
    base_dir: where relative file names in a dict scenario resolve (default: the working directory).
    """
    text, base = to_core(scenario, overrides, base_dir)
    if json.loads(text).get("engine") == "ns3":
        from .ns3_engine import run_ns3

        return run_ns3(scenario, overrides, base_dir)
    sim = _core.Simulation(text, "json", base)
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
    drop_times, drop_flows = sim.drops()
    drops = pd.DataFrame({"time_s": np.frombuffer(drop_times, dtype="<f8"), "flow": np.frombuffer(drop_flows, dtype="<u4")})
    summary_json, columns, events_json = sim.finish()
    series = pd.DataFrame({name: np.frombuffer(data, dtype="<f8") for name, data in columns})
    events = pd.DataFrame(json.loads(events_json), columns=EVENT_COLUMNS)
    return Result(json.loads(summary_json), series, events, json.loads(sim.resolved), drops)
