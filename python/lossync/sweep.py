"""Sweeps: a base scenario, axes over any scenario field, seeds per point; run on a local process
pool or a Dask cluster; one Parquet file per finished (point, seed), so an interrupted sweep loses
nothing that finished and `resume=True` runs only what is missing.

A sweep file (TOML):

    base = "paper-10g.toml"            # a scenario file (relative to this file) or a [base] table
    seeds = 10                         # seeds 1..10 per point (or a list of seeds)
    mode = "cross"                     # "cross": every combination; "zip": axes side by side
    set = ["run.duration=600"]         # fixed overrides applied to every point

    [axes]
    "dumbbell.buffer.bdp_fraction" = [0.01, 0.05, 0.1, 0.2]
    "loss.sync.x" = { from = 0.3, to = 1.0, num = 3 }
    "flows.0.cc" = ["reno", "highspeed", "cubic", "htcp"]
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
import tomllib
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from copy import deepcopy
from itertools import product
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import _core
from .errors import InputFileError, LossyncError, ScenarioError
from .scenario import _parse_value, load_scenario, set_path

#: Summary metrics kept per run (scalar columns of the results).
METRICS = [
    "utilization",
    "jain",
    "loss_rate",
    "congestion_events",
    "sync_rate_mean",
    "mean_queue_pkts",
    "mean_queueing_delay_s",
    "measured_from_s",
]
#: Also in every row: the headline link's largest queue and drops over the whole run.
LINK_METRICS = ["max_queue_pkts", "drops_pkts"]


class Range(BaseModel):
    """`{ from = a, to = b, num = n, scale = "linear" | "log" }`: n values from a to b inclusive."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    start: float = Field(alias="from")
    to: float
    num: int = Field(ge=1)
    scale: Literal["linear", "log"] = "linear"

    def values(self) -> list[float]:
        if self.num == 1:
            return [self.start]
        if self.scale == "log":
            if self.start <= 0 or self.to <= 0:
                raise ValueError("a log range needs positive ends")
            a, b = math.log(self.start), math.log(self.to)
            return [math.exp(a + (b - a) * k / (self.num - 1)) for k in range(self.num)]
        return [self.start + (self.to - self.start) * k / (self.num - 1) for k in range(self.num)]


class SweepSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    base: str | dict[str, Any]
    axes: dict[str, list[Any] | Range]
    mode: Literal["cross", "zip"] = "cross"
    seeds: int | list[int] = 1
    set: list[str] = []

    @field_validator("axes")
    @classmethod
    def _non_empty(cls, axes: dict[str, Any]) -> dict[str, Any]:
        for name, values in axes.items():
            if isinstance(values, list) and not values:
                raise ValueError(f"axis {name!r} has no values")
        return axes

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, seeds: int | list[int]) -> int | list[int]:
        if isinstance(seeds, int) and seeds < 1:
            raise ValueError("seeds must be at least 1")
        if isinstance(seeds, list) and (not seeds or any(s < 0 for s in seeds)):
            raise ValueError("seeds must be a non-empty list of non-negative integers")
        return seeds

    def seed_list(self) -> list[int]:
        return list(range(1, self.seeds + 1)) if isinstance(self.seeds, int) else list(self.seeds)

    def axis_values(self) -> dict[str, list[Any]]:
        return {k: (v.values() if isinstance(v, Range) else list(v)) for k, v in self.axes.items()}

    def points(self) -> list[dict[str, Any]]:
        axes = self.axis_values()
        names = list(axes)
        if self.mode == "zip":
            lengths = {len(v) for v in axes.values()}
            if len(lengths) > 1:
                raise ScenarioError(f"axes: mode = \"zip\" needs axes of equal length, got {sorted(lengths)}")
            return [dict(zip(names, vals)) for vals in zip(*axes.values())]
        return [dict(zip(names, vals)) for vals in product(*axes.values())]


def load_sweep(path: str | Path) -> tuple[SweepSpec, Path]:
    """Reads a sweep file; returns the spec and the folder relative names resolve against."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise InputFileError(f"{p}: no such sweep file") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{p}: {e}") from None
    return parse_spec(doc), p.resolve().parent


def parse_spec(doc: dict[str, Any] | SweepSpec) -> SweepSpec:
    if isinstance(doc, SweepSpec):
        return doc
    try:
        return SweepSpec.model_validate(doc)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise ScenarioError(f"sweep.{where}: {err['msg']}") from None


def _key(point: dict[str, Any], seed: int) -> str:
    text = json.dumps({"point": point, "seed": seed}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def run_point(base: dict[str, Any], base_dir: str, fixed: list[str], point: dict[str, Any], seed: int) -> dict[str, Any]:
    """Runs one (point, seed). Never raises for a bad scenario: the row records the error."""
    from .run import run  # imported here so worker processes pay for it once, lazily

    row: dict[str, Any] = {**point, "seed": seed}
    started = time.perf_counter()
    try:
        doc = deepcopy(base)
        for item in fixed:
            path, text = item.split("=", 1)
            set_path(doc, path.strip(), _parse_value(text.strip()))
        for path, value in point.items():
            set_path(doc, path, value)
        set_path(doc, "run.seed", seed)
        result = run(doc, progress=False, base_dir=base_dir)
        s = result.summary
        row.update({m: s[m] for m in METRICS})
        headline = next(l for l in s["links"] if l["name"] == s["bottleneck"])
        row.update({m: headline[m] for m in LINK_METRICS})
        row["flow_throughput_bps"] = [f["throughput_bps"] for f in s["flows"]]
        resolved = json.dumps(result.scenario, sort_keys=True)
        row["scenario_hash"] = hashlib.sha256(resolved.encode()).hexdigest()[:16]
        row["status"], row["error"] = "ok", ""
    except LossyncError as e:
        row["status"], row["error"] = "error", str(e)
    row["wall_s"] = time.perf_counter() - started
    row["lossync_version"] = _core.__version__
    return row


def _write_row(runs: Path, key: str, row: dict[str, Any]) -> None:
    frame = pd.DataFrame([{**row, "key": key}])
    fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=runs)
    os.close(fd)
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, runs / f"{key}.parquet")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_results(out: str | Path) -> pd.DataFrame:
    """All rows of a sweep's results folder, one per (point, seed)."""
    runs = Path(out) / "runs"
    files = sorted(runs.glob("*.parquet")) if runs.is_dir() else []
    if not files:
        raise InputFileError(f"{out}: no sweep results here")
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _executor(scheduler: str | None, workers: int | None) -> tuple[Executor, Any]:
    if scheduler is None:
        # spawn: workers start clean (no inherited threads or locks); the core starts no threads.
        ctx = multiprocessing.get_context("spawn")
        workers = workers or int(os.environ.get("LOSSYNC_WORKERS", "0")) or os.cpu_count()
        return ProcessPoolExecutor(max_workers=workers, mp_context=ctx), None
    try:
        from distributed import Client
    except ImportError:
        raise LossyncError("--scheduler needs Dask: pip install 'lossync[dask]'") from None
    client = Client(scheduler)
    return client.get_executor(), client


def sweep(
    spec: str | Path | dict[str, Any] | SweepSpec,
    out: str | Path,
    scheduler: str | None = None,
    workers: int | None = None,
    resume: bool = False,
    progress: bool | None = None,
    base_dir: str | Path | None = None,
) -> pd.DataFrame:
    """Runs a sweep and returns its results (one row per point and seed, failures included).

    spec: a sweep file, a dict of the same shape, or a SweepSpec.
    out: results folder; `out/runs/KEY.parquet` is written as each run completes.
    scheduler: a Dask scheduler address; default: a local process pool of `workers` processes.
    resume: keep the finished runs already in `out` and run only the missing or failed ones.
    """
    if isinstance(spec, (str, Path)):
        parsed, folder = load_sweep(spec)
    else:
        parsed, folder = parse_spec(spec), Path(base_dir or Path.cwd()).resolve()
    if isinstance(parsed.base, str):
        base_path = folder / parsed.base
        base = load_scenario(base_path)
        scenario_dir = str(base_path.parent)
    else:
        base, scenario_dir = parsed.base, str(folder)
    points = parsed.points()
    seeds = parsed.seed_list()

    out = Path(out)
    runs = out / "runs"
    spec_file = out / "sweep.json"
    spec_text = json.dumps({"spec": parsed.model_dump(by_alias=True), "base": base}, sort_keys=True, default=str)
    if runs.is_dir() and any(runs.glob("*.parquet")):
        if not resume:
            raise LossyncError(f"{out}: holds results of a sweep already: add --resume, or choose another --out")
        if spec_file.exists() and spec_file.read_text() != spec_text:
            raise LossyncError(f"{out}: holds results of a different sweep; --resume needs the same sweep file")
    runs.mkdir(parents=True, exist_ok=True)
    spec_file.write_text(spec_text)

    done = set()
    if resume:
        for f in runs.glob("*.parquet"):
            if pd.read_parquet(f, columns=["status"])["status"].iloc[0] == "ok":
                done.add(f.stem)
    jobs = [(p, s) for p in points for s in seeds if _key(p, s) not in done]

    if progress is None:
        progress = sys.stderr.isatty()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), unit="run", desc="sweep", initial=0)
    failed = 0
    executor, client = _executor(scheduler, workers)
    futures: dict[Future, tuple[dict[str, Any], int]] = {}
    try:
        for p, s in jobs:
            futures[executor.submit(run_point, base, scenario_dir, list(parsed.set), p, s)] = (p, s)
        for fut in as_completed(futures):
            p, s = futures[fut]
            try:
                row = fut.result()
            except Exception as e:  # a crash of the worker, not a bad scenario
                row = {**p, "seed": s, "status": "error", "error": f"{type(e).__name__}: {e}", "wall_s": float("nan"),
                       "lossync_version": _core.__version__}
            _write_row(runs, _key(p, s), row)
            failed += row["status"] != "ok"
            if bar is not None:
                bar.update(1)
                bar.set_postfix(failed=failed)
    except KeyboardInterrupt:
        for f in futures:
            f.cancel()
        raise
    finally:
        if bar is not None:
            bar.close()
        if client is not None:
            client.close()
        else:
            executor.shutdown(wait=False, cancel_futures=True)
    return load_results(out)


# ---------------------------------------------------------------------------------------------
# Statistics across seeds.

#: Two-sided 95% Student-t quantiles t_{0.975, df} for df = 1..30 (standard tables, e.g. NIST/
#: SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.2).
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df: int) -> float:
    """t_{0.975, df}; beyond 30 degrees of freedom the normal 1.960 plus the first correction term
    (Cornish–Fisher: z + (z³ + z)/(4·df))."""
    if df < 1:
        return math.nan
    if df <= 30:
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df)


def summarize(results: pd.DataFrame, metrics: list[str] | None = None) -> pd.DataFrame:
    """Mean, standard deviation, count and 95% confidence half-width across seeds, per point."""
    metrics = metrics or METRICS
    ok = results[results["status"] == "ok"]
    axes = axes_of(results)
    if ok.empty:
        raise LossyncError("no successful runs to summarize")
    grouped = ok.groupby(axes, dropna=False, sort=True)[metrics]
    mean, std, n = grouped.mean(), grouped.std(ddof=1), grouped.count()
    table = pd.concat({"mean": mean, "std": std, "n": n}, axis=1)
    for m in metrics:
        half = [t975(int(k) - 1) * s / math.sqrt(k) if k > 1 else math.nan for s, k in zip(std[m], n[m])]
        table[("ci95", m)] = half
    return table


_BOOKKEEPING = {"seed", "status", "error", "wall_s", "lossync_version", "scenario_hash", "flow_throughput_bps", "key"}


def axes_of(results: pd.DataFrame) -> list[str]:
    return [c for c in results.columns if c not in set(METRICS) | set(LINK_METRICS) | _BOOKKEEPING]
