"""Running a sweep: one Parquet row per (point, seed) under `OUT/runs/`, written as each run
finishes, keyed by the run's whole scenario document (base, fixed overrides, point and seed), so
that a resumed sweep runs only what is missing and two sweeps never share a row."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from copy import deepcopy
from pathlib import Path
from typing import Any

import pandas as pd

from .. import _core
from ..errors import InputFileError, LossyncError, ScenarioError, emit_warnings
from ..io import atomic_write, remove_temporaries, write_text
from ..progress import Deadline
from ..scenario import Prepared, apply_overrides, load_scenario, prepare, set_path
from ..stats import LINK_METRICS, METRICS
from .spec import SweepSpec, base_path, load_sweep, parse_spec

#: A sweep this large (runs) says its size before checking its scenarios (about 0.1 ms each), and
#: its progress through them; a smaller one says its size when it starts running, so that a sweep
#: refused (bad input, a busy folder) says one line.
LARGE = 1000
#: A sweep hands each run the scenario it resolved for the run's key, so that a point is resolved
#: once; beyond this many bytes of resolved scenarios held at once (a large sweep of many flows)
#: the rest are resolved again where they run, to bound the memory.
KEEP_RESOLVED_BYTES = 256 << 20


def point_document(base: dict[str, Any], fixed: list[str], point: dict[str, Any], seed: int) -> dict[str, Any]:
    """The scenario of one (point, seed): the base, the fixed overrides, the point's values, the seed."""
    doc = deepcopy(base)
    apply_overrides(doc, fixed)
    for path, value in point.items():
        set_path(doc, path, value)
    set_path(doc, "run.seed", seed)
    return doc


def run_key(doc: dict[str, Any], base_dir: str | None = None) -> tuple[str, LossyncError | None, Prepared | None]:
    """A run's identity: its scenario document and, where it resolves, what it resolves to, so
    that the contents of the files it names (an m distribution, a calibration) are part of it: a
    resumed sweep reruns a point whose file changed. Also the error that stops it resolving, or
    the scenario resolved (which the run then uses as it is)."""
    text = json.dumps(doc, sort_keys=True, default=str)
    error, prepared = None, None
    if base_dir is not None:
        try:
            prepared = prepare(doc, [], base_dir)
            text += prepared.core.json
        except LossyncError as e:
            error = e  # a bad point: its row records the error, keyed by its document
    return hashlib.sha256(text.encode()).hexdigest()[:20], error, prepared


def run_point(base: dict[str, Any], base_dir: str, fixed: list[str], point: dict[str, Any], seed: int,
              columns: Callable[[Any], dict[str, Any]] | None = None, timeout_s: float | None = None,
              prepared: Prepared | None = None) -> dict[str, Any]:
    """Runs one (point, seed). Never raises for a bad scenario: the row records the error.
    columns: adds to the row what it returns for the run's Result. timeout_s: the run's wall-time
    limit; a run it stops is a row of the part simulated, `partial` true and a warning saying
    how far it got. prepared: the point's scenario already resolved (`run_key`), run as it is."""
    from ..engines import run  # imported here so worker processes pay for it once, lazily

    # The sweep runs one run per core already: a run's own threads (`run.threads`, every core by
    # default) would only compete with the other workers'.
    _core.set_default_threads(1)
    row: dict[str, Any] = {**point, "seed": seed}
    started = time.perf_counter()
    try:
        scenario = prepared if prepared is not None else point_document(base, fixed, point, seed)
        result = run(scenario, progress=False, base_dir=base_dir, warn=False, timeout_s=timeout_s)
        s = result.summary
        row["partial"] = bool(s["partial"])
        row.update({m: s[m] for m in METRICS})
        headline = next(l for l in s["links"] if l["name"] == s["bottleneck"])
        row.update({m: headline[m] for m in LINK_METRICS})
        row["flow_throughput_bps"] = [f["throughput_bps"] for f in s["flows"]]
        # Why the numbers may be wrong travels with them (outside the validated region, no
        # congestion seen, ...): a sweep row is read without its run's summary.
        row["warnings"] = list(s["warnings"])
        if columns is not None:
            row.update(columns(result))
        resolved = json.dumps(result.scenario, sort_keys=True)
        row["scenario_hash"] = hashlib.sha256(resolved.encode()).hexdigest()[:16]
        row["status"], row["error"] = "ok", ""
    except LossyncError as e:
        row["status"], row["error"], row["warnings"], row["partial"] = "error", str(e), [], False
    row["wall_s"] = time.perf_counter() - started
    row["lossync_version"] = _core.__version__
    return row


def _write_row(runs: Path, key: str, row: dict[str, Any]) -> None:
    frame = pd.DataFrame([{**row, "key": key}])
    atomic_write(runs / f"{key}.parquet", lambda p: frame.to_parquet(p, index=False))


def load_results(out: str | Path, keys: set[str] | None = None) -> pd.DataFrame:
    """The rows of a sweep's results folder, one per (point, seed); only those of `keys` (run
    keys: the rows' `key` column) if given. A key with no row here is refused, naming it."""
    runs = Path(out) / "runs"
    files = sorted(runs.glob("*.parquet")) if runs.is_dir() else []
    if not files:
        raise InputFileError(str(out), "no sweep results here")
    if keys is not None:
        # One key as a str is that key (`in` a str would match its substrings).
        wanted = {keys} if isinstance(keys, str) else set(keys)
        files = [f for f in files if f.stem in wanted]
        unknown = sorted(wanted - {f.stem for f in files}, key=str)
        if unknown:
            raise ScenarioError("keys", _unknown_keys(unknown, out, sorted(f.stem for f in runs.glob("*.parquet"))))
    return pd.concat([_read_run(f) for f in files], ignore_index=True)


def _unknown_keys(unknown: list, out: str | Path, known: list[str]) -> str:
    """Why `keys` is refused: the keys with no row, and the run keys the folder does have (the
    rows' `key` column), the first few of them."""
    shown = ", ".join(repr(k) for k in known[:5]) + (f" and {len(known) - 5} more" if len(known) > 5 else "")
    return (f"no run {'key' if len(unknown) == 1 else 'keys'} {', '.join(repr(k) for k in unknown)} in {out}; keys are run keys, "
            f"the rows' `key` column (this folder's {len(known)}: {shown})")


def swept_axes(out: str | Path) -> list[str] | None:
    """The axes of the sweep whose results are in `out`, as its sweep.json names them (a study's
    extra columns are not among them); None where the folder does not say."""
    try:
        return list(json.loads((Path(out) / "sweep.json").read_text())["spec"]["axes"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_run(f: Path, columns: list[str] | None = None) -> pd.DataFrame:
    """One run's row; a file that is not one (damaged, truncated, put there by hand) is an input
    error naming it, not pyarrow's traceback."""
    try:
        return pd.read_parquet(f, columns=columns)
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise InputFileError(str(f), f"not a lossync sweep row ({str(e).splitlines()[0]})") from None


def _finished(f: Path) -> bool:
    """Whether a run's row is whole: it ran, and no wall-time limit stopped it (rows of sweeps
    before `--timeout` have no `partial` column)."""
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(f).names
    except (OSError, ValueError) as e:
        raise InputFileError(str(f), f"not a lossync sweep row ({str(e).splitlines()[0]})") from None
    row = _read_run(f, ["status", "partial"] if "partial" in names else ["status"]).iloc[0]
    return row["status"] == "ok" and not row.get("partial", False)


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Holds `out/.lock` for the sweep's lifetime; a second sweep into the folder is refused. The
    kernel drops the lock when the process dies, so a killed sweep never leaves it held."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            raise LossyncError(f"{out}: another sweep ({holder}) is writing into this folder; wait for it or choose another --out") from None
        lock.seek(0)
        lock.truncate()
        lock.write(f"pid {os.getpid()}")
        lock.flush()
        try:
            yield
        finally:
            lock.truncate(0)


def _die_with_parent(parent: int) -> None:
    """Pool worker initializer: the worker is killed when the sweep's process dies, even by
    SIGKILL (Linux prctl PR_SET_PDEATHSIG), so no worker outlives its sweep; and once its
    workers are gone, multiprocessing's resource tracker sees its pipe close and exits too."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG = 1 (prctl(2))
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


#: The most processes a local pool may start (`--workers`); beyond one machine, use Dask.
MAX_WORKERS = 1024


def pool_workers(workers: int | None) -> int:
    """The local pool's size: `workers`, else the environment's LOSSYNC_WORKERS, else every core;
    a bad count is refused naming where it came from, before the sweep writes anything."""
    where, value = ("workers", workers) if workers is not None else ("LOSSYNC_WORKERS", os.environ.get("LOSSYNC_WORKERS", "").strip())
    if value in (None, ""):
        return os.cpu_count() or 1
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if isinstance(value, (bool, float)) or not 1 <= n <= MAX_WORKERS:
        raise ScenarioError(where, f"must be a whole number of processes from 1 to {MAX_WORKERS}, got {value!r}")
    return n


def _commands(path: Path, command: str, resume: bool) -> dict[str, Any]:
    """command.json's content: the command that started the sweep and where it ran, with each
    command that resumed it after (`resumed`): a resume keeps the sweep's own command line."""
    this = {"command": command, "cwd": os.getcwd()}
    try:
        before = json.loads(path.read_text()) if resume else None
    except (OSError, ValueError):
        before = None
    if not isinstance(before, dict) or not before.get("command"):
        return this
    return {**before, "resumed": [*before.get("resumed", []), this]}


def _executor(scheduler: str | None, workers: int | None) -> tuple[Executor, Any]:
    if scheduler is None:
        # spawn: workers start clean (no inherited threads or locks); the core starts no threads.
        ctx = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_die_with_parent, initargs=(os.getpid(),))
        return pool, None
    try:
        from distributed import Client
    except ImportError:
        raise LossyncError("--scheduler needs Dask: pip install 'lossync[dask]'") from None
    try:
        client = Client(scheduler, timeout="30s")
    except (OSError, TimeoutError, ValueError) as e:
        raise LossyncError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({e})") from None
    return client.get_executor(), client


def sweep(
    spec: str | Path | dict[str, Any] | SweepSpec,
    out: str | Path,
    scheduler: str | None = None,
    workers: int | None = None,
    resume: bool = False,
    progress: bool | None = None,
    base_dir: str | Path | None = None,
    columns: Callable[[Any], dict[str, Any]] | None = None,
    announce: Callable[[str], None] | None = None,
    command: str | None = None,
    timeout_s: float | None = None,
    warn: bool = True,
) -> pd.DataFrame:
    """Runs a sweep and returns its results (one row per point and seed, failures included).

    spec: a sweep file, a dict of the same shape, or a SweepSpec.
    out: results folder; `out/runs/KEY.parquet` is written as each run completes.
    scheduler: a Dask scheduler address; default: a local process pool of `workers` processes.
    resume: keep the finished runs already in `out` and run only the missing or failed ones.
    columns: a module-level function (workers import it) from a run's Result to extra columns of
    its row, e.g. a study's histograms; its name is part of the sweep's identity, so a resumed
    sweep never mixes rows with and without them.
    announce: called with one line of text: the sweep's size before any work, then its progress
    at each tenth where no progress bar shows it (the command line prints them).
    command: the command line that started it, kept in `out/command.json` with the folder it ran
    in (`lossync report` shows it).
    timeout_s: a wall-time limit per run: a run it stops is kept as the part simulated (`partial`
    true, a warning in `warnings`), and a resumed sweep runs it again.
    warn: also emit each distinct warning of the rows as a `LossyncWarning`, with the number of
    runs that gave it (the command line, which prints its own, turns it off).
    """
    Deadline(timeout_s, "--timeout")  # a bad limit is refused before anything runs
    workers = pool_workers(workers) if scheduler is None else workers
    say = announce or (lambda _: None)
    if isinstance(spec, (str, Path)):
        parsed, folder = load_sweep(spec)
    else:
        parsed, folder = parse_spec(spec), Path(base_dir or Path.cwd()).resolve()
    if isinstance(parsed.base, str):
        path = base_path(parsed.base, folder)
        base = load_scenario(path)
        scenario_dir = str(path.parent)
    else:
        base, scenario_dir = parsed.base, str(folder)
    fixed = list(parsed.set)
    n_points, n_seeds = parsed.size()
    size = f"sweep: {n_points * n_seeds:,} runs ({n_points:,} points × {n_seeds:,} seeds)"
    if n_points * n_seeds >= LARGE:  # checking them takes a while: say so first
        say(f"{size}; checking each scenario")
    pairs = ((p, s) for p in parsed.points() for s in parsed.seed_list())
    keyed, held = [], 0
    for p, s in _progress(pairs, n_points * n_seeds, "checked", progress, say):
        key, error, prepared = run_key(point_document(base, fixed, p, s), scenario_dir)
        held += len(prepared.core.json) if prepared is not None else 0
        keyed.append((p, s, key, error, prepared if held <= KEEP_RESOLVED_BYTES else None))
    # One bad point is a row that records its error; a sweep whose every point is bad (an axis no
    # scenario has, a bad `set` or base) is refused before anything is written.
    if keyed and all(error is not None for *_, error, _ in keyed):
        raise keyed[0][3]
    jobs_all = [(p, s, key, prepared) for p, s, key, _, prepared in keyed]

    out = Path(out)
    runs = out / "runs"
    spec_file = out / "sweep.json"
    identity = {"spec": parsed.model_dump(by_alias=True), "base": base}
    if columns is not None:
        identity["columns"] = f"{columns.__module__}.{columns.__qualname__}"
    spec_text = json.dumps(identity, sort_keys=True, default=str)
    if (out / "summary.json").exists():
        raise LossyncError(f"{out}: holds a run's results (summary.json), not a sweep's; choose another --out")
    # A Dask scheduler is reached before anything is written: one that cannot be reached leaves
    # no results folder behind.
    dask = _executor(scheduler, workers) if scheduler is not None else None
    try:
        with _locked(out):
            if runs.is_dir() and any(runs.glob("*.parquet")):
                if not resume:
                    raise LossyncError(f"{out}: holds results of a sweep already: resume it (--resume, or resume=True in Python), "
                                       "or choose another --out")
                if spec_file.exists() and spec_file.read_text() != spec_text:
                    raise LossyncError(f"{out}: holds results of a different sweep; resuming needs the same sweep")
            runs.mkdir(parents=True, exist_ok=True)
            remove_temporaries(runs)  # rows a killed sweep was writing; we hold the lock
            write_text(spec_file, spec_text)
            if command is not None:
                write_text(out / "command.json", json.dumps(_commands(out / "command.json", command, resume)) + "\n")

            done = set()
            if resume:
                for f in runs.glob("*.parquet"):
                    if _finished(f):
                        done.add(f.stem)
            jobs = [j for j in jobs_all if j[2] not in done]
            if n_points * n_seeds < LARGE:
                say(size)
            if done:
                say(f"sweep: {len(done):,} runs finished before; running the other {len(jobs):,}")
            _execute(jobs, base, scenario_dir, fixed, runs, dask, workers, progress, columns, say, timeout_s)
            rows = load_results(out, {k for _, _, k, _ in jobs_all})
    finally:
        if dask is not None:
            dask[1].close()
    if warn:
        counts = Counter(w for ws in rows["warnings"] for w in dict.fromkeys(ws))  # runs, not mentions
        emit_warnings(f"{n:,} of {len(rows):,} runs: {w}" for w, n in counts.items())
    return rows


def _progress(items: Iterator[Any], total: int, verb: str, progress: bool | None, say: Callable[[str], None]) -> Iterator[Any]:
    """`items`, with a bar on a terminal, or a line at each tenth of a large count elsewhere."""
    if progress is None:
        progress = sys.stderr.isatty()
    if progress:
        from tqdm.auto import tqdm

        yield from tqdm(items, total=total, unit="run", desc=verb, leave=False)
        return
    tenths = {total * k // 10 for k in range(1, 11)} if total >= LARGE else set()
    for done, item in enumerate(items, 1):
        yield item
        if done in tenths:
            say(f"sweep: {done:,} of {total:,} runs {verb}")


def _execute(jobs: list[tuple[dict[str, Any], int, str, Prepared | None]], base: dict[str, Any], scenario_dir: str, fixed: list[str],
             runs: Path, dask: tuple[Executor, Any] | None, workers: int | None, progress: bool | None,
             columns: Callable[[Any], dict[str, Any]] | None = None, say: Callable[[str], None] = lambda _: None,
             timeout_s: float | None = None) -> None:
    """Runs `jobs` on the Dask executor given (its client is the caller's to close), or on a
    process pool of `workers` made and shut down here."""
    if not jobs:
        return
    if progress is None:
        progress = sys.stderr.isatty()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), unit="run", desc="sweep", initial=0)
    failed = finished = 0
    tenths = {len(jobs) * k // 10 for k in range(1, 11)}
    executor, client = dask if dask is not None else _executor(None, workers)
    futures: dict[Future, tuple[dict[str, Any], int, str]] = {}
    try:
        for p, s, key, prepared in jobs:
            futures[executor.submit(run_point, base, scenario_dir, fixed, p, s, columns, timeout_s, prepared)] = (p, s, key)
        for fut in as_completed(futures):
            p, s, key = futures[fut]
            try:
                row = fut.result()
            except Exception as e:  # a crash of the worker, not a bad scenario
                row = {**p, "seed": s, "status": "error", "error": f"{type(e).__name__}: {e}", "wall_s": float("nan"),
                       "lossync_version": _core.__version__, "warnings": [], "partial": False}
            _write_row(runs, key, row)
            failed += row["status"] != "ok"
            finished += 1
            if bar is not None:
                bar.update(1)
                bar.set_postfix(failed=failed)
            elif finished in tenths:
                say(f"sweep: {finished:,} of {len(jobs):,} runs finished ({failed:,} failed)")
    except KeyboardInterrupt:
        for f in futures:
            f.cancel()
        raise
    finally:
        if bar is not None:
            bar.close()
        if client is None:
            executor.shutdown(wait=False, cancel_futures=True)
