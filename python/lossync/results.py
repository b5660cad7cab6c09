"""A run's outcome, `Result`, whatever engine made it; and writing it to a folder."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _core
from .errors import InputFileError, ScenarioError
from .io import atomic_write, check_result_set, json_text, write_result_set
from .lazy import numpy as np
from .lazy import pandas as pd
from .scenario import rate_text

EVENT_COLUMNS = ["link", "start_s", "candidates", "signalled", "lost"]
#: One row per finished flow of a dynamic group (`arrivals`; packet engine).
FCT_COLUMNS = ["group", "slot", "start_s", "size_bytes", "size_pkts", "fct_s", "sent_pkts", "received_pkts",
               "delivered_pkts", "dropped_pkts", "drained"]
#: What `Result.write` may put in a folder; summary.json is written last and marks it complete.
RESULT_FILES = ("scenario.toml", "series.parquet", "events.csv", "fct.parquet", "aggregate.parquet", "figure.png",
                "summary.json")


class _Table:
    """A table of a Result, held as what the core returned and made a DataFrame when first read."""

    def __init__(self, empty: Callable[[], Any]) -> None:
        self.empty = empty

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__.get(self.slot)
        if value is None:
            value = self.empty()
        elif callable(value) and not isinstance(value, pd.DataFrame):
            value = value()
        obj.__dict__[self.slot] = value
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.slot] = value


class Result:
    """The outcome of one run.

    summary: the headline metrics and per-link / per-flow tables, as a dict (docs/model.md §5).
    series: time series, one row per recording instant: `time_s`, `queue_pkts.<link>`,
        `utilization.<link>`, `cwnd_pkts.<flow>`, `rate_pps.<flow>`; the fluid and packet engines
        add `queueing_delay_s.<link>` and `rtt_s.<flow>` (docs/model.md §5.4). Flow columns for at
        most `run.series_flows` flows (1,000 unless set), spread evenly over them.
    events: one row per congestion event in the measurement window: `link`, `start_s`,
        `candidates` (flows that could lose), `signalled` (flows the synchronization module
        signalled: m_k plus any spill; 0 in proportional mode), `lost` (flows that lost packets).
    scenario: the resolved scenario (every default filled in).
    drops: bottleneck drops (`time_s`, `flow`), packet-level engines only (at most 4 million).
    fct: dynamic traffic (flow groups with `arrivals`, packet engine): one row per finished flow,
        in order of completion: `group`, `slot` (the connection that carried it), `start_s`,
        `size_bytes`, `size_pkts`, `fct_s` (arrival to the ACK of its last packet), `sent_pkts`,
        `received_pkts`, `delivered_pkts`, `dropped_pkts`, `drained` (none of its packets left in
        the network when counted). Empty without dynamic traffic.

    The tables are built when first read (a sweep row reads the summary only: building them
    took about as long as a 1 s fluid run, issue 30 item 4).
    """

    series = _Table(lambda: pd.DataFrame())
    events = _Table(lambda: pd.DataFrame(columns=EVENT_COLUMNS))
    drops = _Table(lambda: pd.DataFrame({"time_s": [], "flow": []}))
    fct = _Table(lambda: pd.DataFrame(columns=FCT_COLUMNS))

    def __init__(self, summary: dict[str, Any], series: Any, events: Any, scenario: dict[str, Any], drops: Any = None,
                 fct: Any = None, core_scenario: Any = None) -> None:
        """series, events, drops, fct: DataFrames, or functions that make them when first read."""
        self.summary, self.scenario = summary, scenario
        self.series, self.events, self.drops, self.fct = series, events, drops, fct
        #: The core's resolved scenario the run was made from (`_core.Scenario`), where this
        #: process made it: `scenario_toml` writes it without resolving it again. Not pickled.
        self.core_scenario = core_scenario

    def __repr__(self) -> str:
        s = self.summary
        return f"Result(scenario={s.get('scenario')!r}, engine={s.get('engine')!r}, utilization={s.get('utilization')})"

    def __getstate__(self) -> dict[str, Any]:
        return {"summary": self.summary, "scenario": self.scenario, "_series": self.series, "_events": self.events,
                "_drops": self.drops, "_fct": self.fct, "core_scenario": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @classmethod
    def from_core(cls, finished: tuple[str, list[tuple[str, np.ndarray]], str], scenario: dict[str, Any],
                  drops: tuple[np.ndarray, np.ndarray] | None = None, fct_json: str = "[]", core: Any = None) -> Result:
        """A Result from what the core's `finish` / `summarize` return (and `Simulation.fct`);
        `core`: the `_core.Scenario` it ran."""
        summary_json, columns, events_json = finished
        summary = json.loads(summary_json)
        summary.setdefault("partial", False)  # true only for an interrupted run (engines.core)
        return cls(
            summary,
            lambda: pd.DataFrame(dict(columns)),
            lambda: pd.DataFrame(json.loads(events_json), columns=EVENT_COLUMNS),
            scenario,
            drops=(lambda: pd.DataFrame({"time_s": drops[0], "flow": drops[1]})) if drops is not None else None,
            fct=lambda: pd.DataFrame(json.loads(fct_json), columns=FCT_COLUMNS),
            core_scenario=core,
        )

    def sync_distribution(self) -> pd.DataFrame:
        """The measured distribution of m_k (flows that lost per congestion event) at the
        headline link, as `m,count`: the CSV form the fluid engine's empirical synchronization
        controller reads (`loss.sync = { kind = "empirical", file = … }`)."""
        link = next(l for l in self.summary["links"] if l["name"] == self.summary["bottleneck"])
        hist = link["sync_histogram"]
        return pd.DataFrame([{"m": m, "count": n} for m, n in enumerate(hist) if m >= 1 and n > 0], columns=["m", "count"])

    @property
    def warnings(self) -> list[str]:
        """Why the numbers may be wrong (outside the validated region, no congestion seen, ...):
        `summary["warnings"]`; `lossync.run` also emits each as a `LossyncWarning`."""
        return list(self.summary.get("warnings", []))

    @property
    def flows(self) -> pd.DataFrame:
        """Per-flow metrics, one row per flow."""
        return pd.DataFrame(self.summary["flows"]).set_index("flow")

    @property
    def aggregate(self) -> pd.DataFrame:
        """The aggregate Σ cwnd/RTT of the flows (`time_s`, `rate_pps`), one row per sample, with
        `run.aggregate_interval` (empty without it); its statistics are `summary["aggregate"]`."""
        a = self.summary.get("aggregate")
        if not a:
            return pd.DataFrame({"time_s": [], "rate_pps": []})
        return pd.DataFrame({"time_s": a["time_s"], "rate_pps": a["rate_pps"]})

    @property
    def links(self) -> pd.DataFrame:
        """Per-link metrics, one row per link."""
        return pd.DataFrame(self.summary["links"]).set_index("name")

    def provenance(self, command: str | None = None) -> dict[str, Any]:
        """What made this result: the version, the seed, the resolved scenario and, where known, the
        command line (`lossync run ...`; lossync report shows it)."""
        doc = {"lossync_version": _core.__version__, "seed": self.summary["seed"], "scenario": self.scenario}
        if command is not None:
            doc["command"], doc["cwd"] = command, os.getcwd()
        return doc

    def scenario_toml(self) -> str:
        """The resolved scenario as TOML, every default written out: running it reproduces this
        result (wall time aside)."""
        if self.core_scenario is not None:
            return self.core_scenario.toml()
        return _core.resolve_toml(json.dumps(self.scenario), "json", ".")

    def plot(self, max_flows: int = 20):
        """The run's figure: windows, queue and utilization against time (a matplotlib Figure)."""
        from .plot import figure  # matplotlib is loaded only when a figure is wanted

        if isinstance(max_flows, bool) or not isinstance(max_flows, int) or max_flows < 1:
            raise ScenarioError("max_flows", f"must be a whole number of flows, at least 1, not {max_flows!r}")
        return figure(self, max_flows=max_flows)

    def _repr_html_(self) -> str:
        """Jupyter's view of a Result: the summary table, its warnings and the figure, inline (a
        PNG in a data URI: nothing external)."""
        import base64
        import io

        import matplotlib.pyplot as plt

        fig = self.plot()
        try:
            png = io.BytesIO()
            fig.savefig(png, dpi=80, format="png", bbox_inches="tight")
        finally:
            plt.close(fig)  # or the notebook's inline backend shows it a second time
        img = base64.b64encode(png.getvalue()).decode("ascii")
        return summary_html(self.summary) + f'<img alt="lossync run: windows, queue, utilization" src="data:image/png;base64,{img}"/>'

    def write(self, out_dir: str | Path, figure: bool = True, command: str | None = None) -> list[Path]:
        """Writes summary.json (with the resolved scenario for provenance), scenario.toml (the
        resolved scenario, which re-runs to this result), series.parquet, events.csv, fct.parquet
        (with dynamic traffic only), aggregate.parquet (with `run.aggregate_interval` only) and
        figure.png into `out_dir`, as one set: summary.json appears last, only beside files of
        the same run, and names each with its SHA-256 (`files`), so `Result.read` can tell a
        complete set; an interrupted or killed write leaves no summary.json. command: the command
        line that made it, kept in the summary's provenance (`lossync report` shows it)."""
        if Path(out_dir).exists() and not Path(out_dir).is_dir():
            raise InputFileError("out_dir", f"{out_dir} is a file, not a folder", str(out_dir))
        files = {
            "scenario.toml": lambda p: p.write_text(self.partial_note("# ") + self.scenario_toml()),
            "series.parquet": lambda p: self.series.to_parquet(p, index=False),
            "events.csv": lambda p: self.events.to_csv(p, index=False),
        }
        if len(self.fct):
            files["fct.parquet"] = lambda p: self.fct.to_parquet(p, index=False)
        if self.summary.get("aggregate"):
            files["aggregate.parquet"] = lambda p: self.aggregate.to_parquet(p, index=False)
        if figure:
            fig = self.plot()
            files["figure.png"] = lambda p: fig.savefig(p, dpi=120, format="png")

        def write_summary(path: Path, digests: dict[str, str]) -> None:
            doc = dict(self.summary, provenance=self.provenance(command), files=digests)
            path.write_text(json_text(doc) + "\n")

        try:
            # The folder's report.html (`lossync report`) shows the result this one replaces.
            return write_result_set(out_dir, files, "summary.json", write_summary, known=(*RESULT_FILES, "report.html"))
        finally:
            if figure:
                import matplotlib.pyplot as plt

                plt.close(fig)

    def partial_note(self, prefix: str = "") -> str:
        """For a run a wall-time limit or Ctrl-C stopped: a line saying that its scenario runs
        longer than it did, and how to rerun the part simulated ("" for a whole run)."""
        if not self.summary.get("partial"):
            return ""
        done, planned = self.summary["duration_s"], self.scenario["run"]["duration_s"]
        return (f"{prefix}PARTIAL: this run stopped at {done:.6g} s of the {planned:.6g} s below (a wall-time limit or "
                f"Ctrl-C); `lossync run FILE --duration {done:.6g}s` reruns the part simulated.\n")

    def rerun_command(self, scenario_file: str | Path) -> tuple[str, str]:
        """(what it does, the command) that reruns this result from its resolved scenario file."""
        if self.summary.get("partial"):
            done = self.summary["duration_s"]
            return ("Re-run the part simulated (this run stopped early; the scenario below runs its whole duration)",
                    f"lossync run {scenario_file} --duration {done:.6g}s")
        return ("Re-run it (the resolved scenario beside this page, its seed included: the same summary)", f"lossync run {scenario_file}")

    def report(self, path: str | Path, command: str | None = None) -> Path:
        """Writes one self-contained HTML page of this run to `path`: the summary, the figure, the
        warnings, the command that reproduces it and the resolved scenario, the figure inline and
        nothing linked from outside the file (share it as it is). command: the command line that
        made it, if known. `lossync report DIR` does the same for a folder `write` filled."""
        from .htmlpage import figure_png, run_page

        what, rerun = self.rerun_command("scenario.toml")
        commands = [(f"{what}: save the Scenario below as scenario.toml, then", rerun)]
        if command is not None:
            commands.insert(0, ("Made by", command))
        text = run_page(self, figure_png(self.plot()), commands)
        return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))

    @classmethod
    def read(cls, out_dir: str | Path) -> Result:
        """The result `write` put in `out_dir`. Refused (InputFileError) if the set is incomplete:
        no summary.json (the write was interrupted), or a file missing or not the one the summary
        names."""
        out = Path(out_dir)
        marker = out / "summary.json"
        if not marker.is_file():
            raise InputFileError(str(marker), "missing: no complete result here (the run was interrupted, or never wrote here)")
        try:
            doc = json.loads(marker.read_text())
            digests, provenance = doc.pop("files"), doc.pop("provenance")
        except (ValueError, KeyError) as e:
            raise InputFileError(str(marker), f"not a lossync summary ({type(e).__name__}: {e})") from None
        check_result_set(out, digests)
        events = pd.read_csv(out / "events.csv") if "events.csv" in digests else pd.DataFrame(columns=EVENT_COLUMNS)
        result = cls(doc, pd.read_parquet(out / "series.parquet"), events, provenance["scenario"])
        if "fct.parquet" in digests:
            result.fct = pd.read_parquet(out / "fct.parquet")
        return result


#: Flows listed in `summary_html`; the rest are counted.
HTML_FLOWS = 20


def summary_html(summary: dict[str, Any]) -> str:
    """A run's summary as HTML tables: the headline metrics, the warnings, one row per link, and
    the first HTML_FLOWS flows."""
    from html import escape

    s = summary

    def table(head: list[str], rows: list[list[Any]]) -> str:
        cells = "".join(f"<th>{escape(h)}</th>" for h in head)
        body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in r) + "</tr>" for r in rows)
        return f'<table class="lossync-summary"><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>'

    def num(v: Any, spec: str) -> str:
        return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)

    partial = ' <b style="color:#b00">partial</b>' if s.get("partial") else ""
    title = (f"<p><b>{escape(str(s['scenario']))}</b>: engine {escape(s['engine'])}, seed {s['seed']}, {s['duration_s']:g} s simulated, "
             f"measured from {s['measured_from_s']:.6g} s{partial}</p>")
    head = table(["metric", "value"], [
        ["utilization", f"{s['utilization']:.4f} (bottleneck {s['bottleneck']})"],
        ["Jain's index", num(s["jain"], ".4f")],
        ["loss rate", num(s["loss_rate"], ".3e")],
        ["congestion events", s["congestion_events"]],
        ["sync rate (mean)", num(s["sync_rate_mean"], ".4g")],
        ["mean queue", f"{s['mean_queue_pkts']:.1f} packets ({s['mean_queueing_delay_s'] * 1e3:.2f} ms)"],
    ])
    warns = "".join(f"<li>{escape(w)}</li>" for w in s.get("warnings", []))
    warns = f'<p>Warnings:</p><ul class="lossync-warnings">{warns}</ul>' if warns else ""
    links = table(["link", "capacity", "buffer (packets)", "utilization", "loss rate", "mean queue", "events"],
                  [[li["name"], rate_text(li["capacity_bps"]), f"{li['buffer_pkts']:,.0f}", f"{li['utilization']:.4f}",
                    num(li["loss_rate"], ".2e"), f"{li['mean_queue_pkts']:.1f}", li["congestion_events"]] for li in s["links"]])
    total = sum(f["throughput_bps"] for f in s["flows"]) or 1.0
    flows = table(["flow", "group", "variant", "RTT (ms)", "throughput", "share", "loss rate", "mean cwnd"],
                  [[f["flow"], f["group"], f["variant"], f"{f['rtt_s'] * 1e3:.1f}", rate_text(f["throughput_bps"]),
                    f"{f['throughput_bps'] / total:.3f}", num(f["loss_rate"], ".2e"), f"{f['mean_cwnd_pkts']:.1f}"]
                   for f in s["flows"][:HTML_FLOWS]])
    more = f"<p>and {len(s['flows']) - HTML_FLOWS} more flows (Result.flows)</p>" if len(s["flows"]) > HTML_FLOWS else ""
    return f'<div class="lossync-result">{title}{head}{warns}{links}{flows}{more}</div>'
