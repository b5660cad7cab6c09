"""The framework of the seed studies (`lossync reproduce NAME [--quick]`): a `Study` runs a sweep
(or a few runs), writes its data and a figure laid out like the paper's, and `reproduce` writes a
Markdown report that puts each claim of the paper (quoted from the seed text) beside what was
measured and says whether it holds. One module per seed registers its studies.

Full fidelity (the default) is the paper's protocol: 10 seeds × 3000 s, statistics from the first
congestion event. `quick` cuts seeds and duration for CI; its numbers are indicative only.
"""

from __future__ import annotations

import json
import os
import shlex
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import LossyncError, ScenarioError
from ..io import atomic_write
from ..plot import plt
from ..stats import summarize
from ..sweeps import sweep

PAPER = "Kumar, Xue, Park, 'Impact of Loss Synchronization on Reliable High Speed Networks', JCNC 2014"
#: Short names of the variants, as the seed papers write them.
VARIANT_NAMES = {"reno": "AIMD", "highspeed": "HSTCP", "cubic": "CUBIC", "htcp": "H-TCP", "scalable": "STCP", "bic": "BIC"}


@dataclass
class Claim:
    text: str
    check: Callable[[Any], tuple[str, bool | None]]
    #: False where --quick's few seeds and short runs give another verdict than the full protocol
    #: (measured: docs/results.md against a quick run), or rest on runs too short to see the
    #: law's congestion events; its quick verdict is then not given.
    quick_decides: bool = True


#: The verdict of a claim that --quick cannot decide.
UNDECIDED_QUICK = "undecided (quick)"


@dataclass
class Study:
    name: str
    title: str
    setup: str
    run: Callable[[Path, bool, str], Any]
    figure: Callable[[Any], Any]
    claims: list[Claim] = field(default_factory=list)
    source: str = PAPER
    #: The engine the study is meant for (the paper's fluid model, or packets for a test bed).
    engine: str = "fluid"
    #: The protocol each mode runs: full fidelity, and --quick.
    fidelity: tuple[str, str] = ("10 seeds × 3000 s", "2 seeds × at most 300 s")
    #: The engines that can run it (None: any).
    engines: tuple[str, ...] | None = None
    #: Its claims judged outside the paper's model as well (None: not yet).
    cross: CrossCheck | None = None


#: The engines that judge a study's claims besides the paper's own model, and their names in the
#: reports: the fluid engine's default `tcp` loss model, whose synchronization is its own, and the
#: packet reference (`lossync compare`'s `packet:jitter`); Linux where a seed's setup was a test bed.
CROSS_ENGINES = {"fluid:tcp": "default fluid model", "packet:jitter": "packet engine", "kernel": "Linux"}


@dataclass
class CrossCheck:
    """A study's claims judged in the engines of `CROSS_ENGINES` as well as in the paper's model:
    the three verdicts of docs/results.md. Neither engine has the sync module's parameters (X, m,
    the drop policy); a claim about them is judged in the paper's model only."""
    #: (out, quick, engine) -> the data its checks read, for each engine of `protocol`; a str
    #: instead says why the engine did not run (Linux needs root). None: the study's own run, in
    #: the engine's engine, or `packet:jitter` for its run helpers to apply (`as_engine`); nothing
    #: runs for an engine whose every check is a reason.
    run: Callable[[Path, bool, str], Any] | None
    #: engine -> (full protocol, --quick protocol): the engines that run, in the words of the report.
    protocol: dict[str, tuple[str, str]]
    #: Per claim of the study, in order: its check on an engine's data (a verdict of None: the
    #: engine cannot judge it, the text says why), or the reason no engine but the paper's model can.
    #: None: the claims' own checks (a study whose data have the same shape in every engine). A
    #: dict: such a list per engine, the claims' own checks for an engine it does not name.
    checks: list[Callable[[Any], tuple[str, bool | None]] | str] | dict[str, list] | None = None
    #: (the model's data, {engine: data}) -> a figure with the engines side by side (engines.png).
    figure: Callable[[Any, dict[str, Any]], Any] | None = None


def in_fluid(protocol: tuple[str, str]) -> CrossCheck:
    """A study written for the packet engine (seeds 002–004, whose papers simulated packets)
    judged in the default fluid model and in the packet engine with send jitter too: its own runs
    and checks, in the fluid engine (its scenarios set no loss model, so the default `tcp`) and
    with one bottleneck packet time of send jitter on every flow group (`as_engine`)."""
    return CrossCheck(None, {"fluid:tcp": protocol, "packet:jitter": protocol})


def as_engine(doc: dict, engine: str) -> tuple[dict, str]:
    """A packet study's scenario and engine name for `engine`, an engine's name or
    `packet:jitter` (its cross run: `engine_doc`'s jitter, in the packet engine). Its other
    settings stay: the fluid engine runs it with its default loss model."""
    if engine == "packet:jitter":
        return engine_doc(doc, engine), "packet"
    return doc, engine


def engine_doc(doc: dict, engine: str) -> dict:
    """A study's scenario in the paper's model, `doc`, for one of `CROSS_ENGINES`: the default
    `tcp` loss model in place of the sync module, or the packet engine (no loss model: its losses
    are its queues') with one bottleneck packet time of send jitter per flow group (Floyd &
    Jacobson 1992, `lossync compare`'s `packet:jitter`), or Linux (no loss model either)."""
    out = deep_merge(doc, {})
    out.pop("loss", None)
    if engine == "fluid:tcp":
        return {**out, "loss": {"model": "tcp"}, "engine": "fluid"}
    if engine == "packet:jitter":
        from ..comparison import with_send_jitter

        return {**with_send_jitter(out), "engine": "packet"}
    if engine == "kernel":
        return {**out, "engine": "kernel"}
    raise LossyncError(f"unknown engine {engine!r} (known: {', '.join(CROSS_ENGINES)})")


def deep_merge(base: dict, extra: dict) -> dict:
    out = json.loads(json.dumps(base))
    for k, v in extra.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def verdict_of(holds: bool | None) -> str:
    return "n/a" if holds is None else ("yes" if holds else "**no**")


def _verdict(holds: bool | None, undecided: bool) -> str:
    """A claim's verdict in a report: none where --quick cannot decide it, unless the data cannot
    judge it at all (n/a)."""
    return UNDECIDED_QUICK if undecided and holds is not None else verdict_of(holds)


def fidelity_overrides(quick: bool, duration: float = 3000.0) -> tuple[int, list[str]]:
    """Seeds and run-length overrides: the paper's 10 × 3000 s, or 2 × 300 s for --quick."""
    if quick:
        return 2, [f"run.duration={min(duration, 300.0)}"]
    return 10, [f"run.duration={duration}"]


#: The warnings of every run of the study under way, with where each came from (`reproduce`
#: writes them into its report: a number that may be wrong says so where it is ruled on).
_WARNINGS: ContextVar[list[tuple[str, str]] | None] = ContextVar("study_warnings", default=None)


def record_warnings(where: str, warnings: Iterable[str]) -> None:
    """Keeps a run's warnings for the report of the study under way (none: nothing to keep)."""
    kept = _WARNINGS.get()
    if kept is not None:
        kept.extend((where, w) for w in dict.fromkeys(warnings))


def study_run(doc: dict, where: str, overrides: list[str] | None = None) -> Any:
    """One run of a study (`lossync.run` without a bar or Python warnings), its warnings kept for
    the study's report under `where` (the case or part it belongs to)."""
    from ..engines import run

    r = run(doc, overrides or [], progress=False, warn=False)
    record_warnings(where, r.warnings)
    return r


def run_sweep(out: Path, base: dict, axes: dict, seeds: int, fixed: list[str], engine: str,
              columns: Callable[[Any], dict[str, Any]] | None = None, workers: int | None = None,
              mode: str = "cross") -> pd.DataFrame:
    """mode: "cross" (every combination of the axes) or "zip" (the axes side by side: one point per
    index, for a study whose cells differ in several fields at once)."""
    base, engine = as_engine(base, engine)
    rows = sweep({"base": base, "axes": axes, "seeds": seeds, "mode": mode, "set": [*fixed, f'engine="{engine}"']},
                 out, workers=workers, resume=True, progress=None, columns=columns, warn=False)
    failed = rows[rows["status"] != "ok"]
    if len(failed):
        raise LossyncError(f"{len(failed)} of {len(rows)} runs failed, e.g.: {failed['error'].iloc[0]}")
    for ws in rows["warnings"]:
        record_warnings(out.name, ws)
    return rows


def flatten(table: pd.DataFrame) -> pd.DataFrame:
    flat = table.reset_index()
    flat.columns = ["/".join(str(c) for c in col if c != "") if isinstance(col, tuple) else col for col in flat.columns]
    return flat


def cell_means(rows: pd.DataFrame, metric: str = "utilization") -> pd.DataFrame:
    """Mean, std, n and ci95 of `metric` per point, as flat columns (`mean/utilization`, ...)."""
    return flatten(summarize(rows, [metric]))


STUDIES: dict[str, Study] = {}


def register(s: Study) -> None:
    STUDIES[s.name] = s


def _study(name: str) -> Study:
    if name not in STUDIES:
        raise LossyncError(f"unknown study {name!r} (known: {', '.join(STUDIES)})")
    return STUDIES[name]


def listing(name: str | None = None) -> str:
    """`lossync reproduce --list`: each study's name, title, engine and protocols; with a name,
    that study alone, with its setup and the paper's claims its report judges."""
    if name is None:
        return "\n".join(_listing_head(key, study) for key, study in STUDIES.items())
    study = _study(name)
    engines = "fluid or packet" if study.engines is None else " or ".join(study.engines) + " only"
    lines = [_listing_head(name, study), _wrapped(f"--engine: {engines}"), _wrapped(f"setup: {study.setup}"),
             _wrapped(f"source: {study.source}"), _wrapped("claims (each judged in report.md):")]
    for k, claim in enumerate(study.claims, 1):
        note = "" if claim.quick_decides else " (--quick gives no verdict)"
        lines.append(_wrapped(f"{k}. {claim.text}{note}", hang=3))
    return "\n".join(lines)


#: Where a study's description starts in `--list`, after its name.
LISTING_INDENT = 21


def _listing_head(name: str, study: Study) -> str:
    return (f"{name:<{LISTING_INDENT}}{study.title}\n{'':<{LISTING_INDENT}}engine {study.engine}; "
            f"full: {study.fidelity[0]}; --quick: {study.fidelity[1]}")


def _wrapped(text: str, hang: int = 2) -> str:
    """A line of a study's description, wrapped at 100 columns under the listing's indent."""
    indent = " " * LISTING_INDENT
    return textwrap.fill(text, 100, initial_indent=indent, subsequent_indent=indent + " " * hang)


def reproduce(name: str, out: str | Path, quick: bool = False, engine: str | None = None) -> Path:
    """Runs one study; writes its data, figure.png and report.md into `out`; returns the report.
    engine: default, the study's own (fluid for the paper's figures, packet for test beds)."""
    study = _study(name)
    engine = engine or study.engine
    if study.engines is not None and engine not in study.engines:
        raise ScenarioError("--engine", f"{name} runs on {', '.join(study.engines)} only, not {engine}")
    out = Path(out)
    _refuse_foreign(out, {"study": name, "quick": quick, "engine": engine})
    out.mkdir(parents=True, exist_ok=True)
    # What this folder is and the command that remakes it (`lossync report` shows them).
    command = shlex.join(["lossync", "reproduce", name, *(["--quick"] if quick else []), "--engine", engine, "--out", str(out)])
    atomic_write(out / "study.json", lambda p: p.write_text(json.dumps({"study": name, "quick": quick, "engine": engine,
                                                                        "command": command, "cwd": os.getcwd()}) + "\n"))
    kept = _WARNINGS.set([])
    try:
        data = study.run(out, quick, engine)
        lines, report = _report(study, data, out, quick, engine)
        lines += _warnings_section(_WARNINGS.get() or [])
    finally:
        _WARNINGS.reset(kept)
    atomic_write(report, lambda p: p.write_text("\n".join(lines) + "\n"))
    return report


def _refuse_foreign(out: Path, this: dict[str, Any]) -> None:
    """Refuses a folder holding another result: a run's (its files would sit beside the study's,
    and `lossync report` would mix them), or another study's, or this one's on another engine or
    protocol (their files would stay beside this run's, and the page would show them). The same
    study again resumes its sweeps."""
    if (out / "summary.json").exists():
        raise ScenarioError("--out", f"{out} holds a run's results (summary.json); choose another folder")
    try:
        before = json.loads((out / "study.json").read_text())
    except (OSError, ValueError):
        return
    was = {k: before.get(k) for k in this}
    if was != this:
        said = ", ".join(f"{k} {v}" for k, v in was.items())
        raise ScenarioError("--out", f"{out} holds another reproduction ({said}); choose another folder")


def _warnings_section(kept: list[tuple[str, str]]) -> list[str]:
    """The report's account of its runs' warnings: each distinct one, how many runs gave it and
    in which parts of the study."""
    if not kept:
        return ["", "**Warnings.** No run of this study said its numbers may be wrong."]
    runs = Counter(w for _, w in kept)
    lines = ["", f"**Warnings.** Runs of this study said their numbers may be wrong ({len(runs)} distinct warnings); "
             "the verdicts above rest on them:", ""]
    for w, n in runs.most_common():
        parts = list(dict.fromkeys(where for where, x in kept if x == w))
        shown = ", ".join(parts[:4]) + (f" and {len(parts) - 4} more" if len(parts) > 4 else "")
        lines.append(f"- {n} run{'s' if n > 1 else ''} ({shown}): {w}")
    return lines


def _report(study: Study, data: Any, out: Path, quick: bool, engine: str) -> tuple[list[str], Path]:
    """The report's lines (its figure written beside it) and its path."""
    protocol = f"--quick: {study.fidelity[1]}, indicative only" if quick else f"full fidelity: {study.fidelity[0]}"
    fig = study.figure(data)
    if quick:
        fig.text(0.005, 0.995, f"QUICK RUN ({study.fidelity[1]}): indicative only", ha="left", va="top", fontsize=8,
                 color="tab:red", weight="bold")
    atomic_write(out / "figure.png", lambda p: fig.savefig(p, dpi=120, format="png",
                                                          metadata={"Title": study.title, "Description": protocol}))
    plt.close(fig)
    title = f"# {study.title}" + (" (quick run)" if quick else "")
    lines = [title, "", f"Source: {study.source}. Reproduced with lossync ({protocol}; engine {engine}).", "",
             f"**Setup.** {study.setup}", ""]
    if quick:
        lines += [f"**This run is --quick**: {study.fidelity[1]}, where full fidelity runs {study.fidelity[0]}. Its numbers "
                  f"are indicative; a claim marked “{UNDECIDED_QUICK}” gets another verdict from the full protocol, so "
                  "none is given here.", ""]
    lines += ["![figure](figure.png)", "", "| paper's claim | measured | holds |", "|---|---|---|"]
    verdicts = []
    for c in study.claims:
        measured, holds = c.check(data)
        verdict = _verdict(holds, quick and not c.quick_decides)
        verdicts.append(verdict)
        lines.append(f"| {c.text} | {measured} | {verdict} |")
    if study.cross is not None and engine == study.engine:
        lines += _three_verdicts(study, data, verdicts, out, quick)
    return lines, out / "report.md"


def _run_cross(study: Study, out: Path, quick: bool, engine: str) -> Any:
    """A study's data in one cross engine, or why there are none: the engine refused its
    scenarios (the refusal, one line naming the field)."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        if study.cross is not None and study.cross.run is not None:
            return study.cross.run(out, quick, engine)
        # The study's own run: `fluid` for fluid:tcp (its default loss model), packet:jitter as is.
        return study.run(out, quick, engine if engine == "packet:jitter" else engine.partition(":")[0])
    except LossyncError as e:
        return f"{CROSS_ENGINES[engine]} refuses it: {e}"


#: The heading of a report's table of three verdicts (scripts/results.py and the tests find it).
THREE_VERDICTS = "**Three verdicts.**"


def _three_verdicts(study: Study, data: Any, model_verdicts: list[str], out: Path, quick: bool) -> list[str]:
    """Runs the study's cross engines and returns the report's table of each claim's verdict in
    the paper's model, the default fluid model and the packet engine (and engines.png)."""
    cross = study.cross
    assert cross is not None
    own_checks = [c.check for c in study.claims]
    checks = {e: cross.checks.get(e, own_checks) if isinstance(cross.checks, dict) else cross.checks or own_checks
              for e in cross.protocol}
    assert all(len(c) == len(study.claims) for c in checks.values())
    runs = {e: None if all(isinstance(c, str) for c in checks[e]) else _run_cross(study, out / e.replace(":", "-"), quick, e)
            for e in cross.protocol}
    protocols = "; ".join(f"{CROSS_ENGINES[e]} (`{e}`): {p[1] if quick else p[0]}" for e, p in cross.protocol.items()
                          if runs[e] is not None)
    under = "" if all(d is None for d in runs.values()) else f", at the seed's parameters under these protocols: {protocols}"
    own = "paper's model" if study.engine == "fluid" else f"{study.engine} engine (the study's)"
    if study.engine == "fluid":
        intro = (f"Each claim in the paper's model (above) and in the engines whose loss synchronization is their own{under}. "
                 "Neither has the sync module's parameters, so a claim about them is judged in the paper's model only.")
    else:
        intro = f"Each claim in the {study.engine} engine (above), as the seed's paper simulated it, and in the other engines{under}."
    lines = ["", f"{THREE_VERDICTS} {intro}", "",
             f"| paper's claim | {own} | " + " | ".join(CROSS_ENGINES[e] for e in runs) + " |",
             "|---|---|" + "---|" * len(runs)]
    for k, (claim, model) in enumerate(zip(study.claims, model_verdicts)):
        cells = []
        for e, d in runs.items():
            check = checks[e][k]
            if isinstance(d, str):
                cells.append(f"not run: {d}")
                continue
            if isinstance(check, str):
                cells.append(f"n/a: {check}")
                continue
            measured, holds = check(d)
            verdict = _verdict(holds, quick and not claim.quick_decides)
            cells.append(f"{verdict}: {measured}")
        lines.append(f"| {claim.text} | {model} | " + " | ".join(cells) + " |")
    if cross.figure is not None:
        fig = cross.figure(data, runs)
        atomic_write(out / "engines.png", lambda p: fig.savefig(p, dpi=120, format="png"))
        plt.close(fig)
        lines += ["", "![the engines side by side](engines.png)"]
    return lines

