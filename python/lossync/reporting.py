"""`lossync report DIR`: one self-contained HTML page for an output folder, to look at and share: a
run (`lossync run --out`, `Result.write`), a sweep (`lossync sweep`) or a study (`lossync
reproduce`). Each page holds the scenario, the summary, the figures, the warnings and the command
that reproduces it; its figures are inline and it links to nothing outside itself (htmlpage.py).

What each folder holds, and so what its page shows:
- run: summary.json (with `provenance`: the resolved scenario and, from the command line, the
  command), scenario.toml, series.parquet, figure.png;
- sweep: sweep.json (the sweep and its base scenario), runs/*.parquet (a row per run, with its
  warnings), command.json (the command line, where `lossync sweep` made it), any figures `lossync
  plot` drew into it;
- study: study.json (the study, its protocol and its command), report.md (the claims), figure.png,
  data files, and a sweep folder per part of the study.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from . import _core
from .errors import InputFileError, LossyncError
from .htmlpage import command_block, esc, figure_png, image, markdown, page, pre, run_page, table, warnings_block
from .io import atomic_write
from .results import Result
from .stats import CONFIDENCE, axes_of, ci_label, hashable, zero_interval_note
from .stats import summarize as summarize_rows
from .sweeps import load_results, swept_axes

#: The metrics a sweep's page summarizes and draws.
SWEEP_METRICS = ["utilization", "jain", "loss_rate", "mean_queueing_delay_s"]
#: Files a page shows as figures.
FIGURES = (".png", ".svg")


def kind_of(folder: Path) -> str:
    """"run", "sweep" or "study": what wrote `folder` (InputFileError if none of them)."""
    if (folder / "study.json").is_file() or (folder / "report.md").is_file():
        return "study"
    if (folder / "summary.json").is_file():
        return "run"
    if (folder / "runs").is_dir() or (folder / "sweep.json").is_file():
        return "sweep"
    raise InputFileError(str(folder), "not a lossync output folder: no summary.json (a run), sweep.json (a sweep) or report.md (a study)")


def report(folder: str | Path, out: str | Path | None = None) -> Path:
    """Writes one self-contained HTML page for the run, sweep or study in `folder` (default
    `folder/report.html`) and returns its path."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputFileError(str(folder), "no such folder")
    kind = kind_of(folder)
    text = {"run": _run, "sweep": _sweep, "study": _study}[kind](folder)
    path = Path(out) if out is not None else folder / "report.html"
    return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def _made_by(doc: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The command line stored with a result, and the folder it ran in; then each command that
    resumed it (a sweep's `resumed`)."""
    if not doc or not doc.get("command"):
        return []

    def where(d: dict[str, Any]) -> str:
        return f" (run in {d['cwd']})" if d.get("cwd") else ""

    return [(f"Made by{where(doc)}", doc["command"]),
            *((f"Resumed by{where(d)}", d["command"]) for d in doc.get("resumed", []) if isinstance(d, dict) and d.get("command"))]


def _figures(folder: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """The figures saved in `folder` itself, inline."""
    return [image(p.read_bytes(), p.suffix[1:].lower(), p.name) for p in sorted(folder.iterdir())
            if p.suffix.lower() in FIGURES and p.is_file() and p.name not in skip]


def _run(folder: Path) -> str:
    result = Result.read(folder)
    provenance = json.loads((folder / "summary.json").read_text()).get("provenance", {})
    png = folder / "figure.png"
    figure = png.read_bytes() if png.is_file() else figure_png(result.plot())
    commands = [*_made_by(provenance), result.rerun_command(folder / "scenario.toml")]
    return run_page(result, figure, commands)


def _warning_counts(rows: pd.DataFrame) -> dict[str, int]:
    """Each distinct warning of the runs, with how many runs gave it."""
    counts: dict[str, int] = {}
    if "warnings" in rows.columns:
        for ws in rows.loc[rows["status"] == "ok", "warnings"]:
            for w in dict.fromkeys(ws if ws is not None else []):
                counts[w] = counts.get(w, 0) + 1
    return counts


def _sweep_figures(rows: pd.DataFrame, folder: Path, swept: list[str]) -> tuple[list[str], list[str]]:
    """Each headline metric against the swept axis (of `swept`) with most values, a line per value
    of the next, panels for one more (plot.facets); (figures, notes on what could not be drawn)."""
    from .plot import facets, log_spaced, sweep_figure

    ok = hashable(rows[rows["status"] == "ok"], swept)
    axes = [a for a in swept if a in ok.columns]
    numeric = [a for a in axes if pd.api.types.is_numeric_dtype(ok[a]) and not pd.api.types.is_bool_dtype(ok[a])]
    if not axes:
        return [], ["no swept axis to draw against"]
    order = sorted(numeric or axes, key=lambda a: -ok[a].nunique())
    x = order[0]
    rest = sorted((a for a in axes if a != x and ok[a].nunique() > 1), key=lambda a: ok[a].nunique())
    hue = rest[0] if rest else None
    figures, notes = [], []
    for metric in [m for m in SWEEP_METRICS if m in ok.columns and ok[m].notna().any()]:
        try:
            col, row, _ = facets(ok, x, metric, hue, axes=axes)
            fig = sweep_figure(ok, x, metric, hue, col, row, logx=log_spaced(folder, x), axes=axes)
        except LossyncError as e:
            notes.append(f"{metric}: not drawn ({e}); lossync plot draws any view of it")
            continue
        figures.append(image(figure_png(fig), "png", f"{metric} against {x}" + (f", a line per {hue}" if hue else "")))
    return figures, notes


def _sweep_file(folder: Path) -> tuple[dict[str, Any] | None, str]:
    """The sweep as a file that reruns it (its base scenario inline), and its base resolved as TOML."""
    try:
        identity = json.loads((folder / "sweep.json").read_text())
    except (OSError, ValueError):
        return None, ""
    spec = {**identity.get("spec", {}), "base": identity.get("base", {})}
    try:
        base = _core.resolve_toml(json.dumps(identity.get("base", {})), "json", str(folder))
    except (ValueError, OSError):  # a base that names files beside the original sweep file
        base = ""
    return spec, base


def _sweep(folder: Path) -> str:
    rows = load_results(folder)
    axes = swept_axes(folder) or axes_of(rows)
    rows = hashable(rows, axes)  # a table-valued axis is shown (and keys its points) as its TOML
    ok = rows[rows["status"] == "ok"]
    failed = rows[rows["status"] != "ok"]
    command = _read_json(folder / "command.json")
    spec, base = _sweep_file(folder)
    commands = _made_by(command)
    if spec is not None:
        commands.append(("Re-run it: save the sweep file below as sweep.json, then (files its scenario names are looked up "
                         "beside sweep.json)", "lossync sweep sweep.json --out NEW_FOLDER"))
    metrics = [m for m in SWEEP_METRICS if m in ok.columns]
    summary = ["<p>No run succeeded.</p>"]
    if len(ok):
        stats = summarize_rows(rows, metrics, axes=axes)
        seeds = stats[("n", metrics[0])].astype(int)
        shown = pd.DataFrame({m: [f"{a:.4g}" + ("" if pd.isna(b) else f" ± {b:.2g}") for a, b in zip(stats[("mean", m)], stats[("ci95", m)])]
                              for m in metrics}, index=stats.index)
        shown.insert(0, "seeds", seeds)
        if ("warned_runs", metrics[0]) in stats.columns:
            shown["runs that warned"] = stats[("warned_runs", metrics[0])].astype(int)
        label = ci_label(set(seeds[seeds > 1])) if (seeds > 1).any() else None
        note = (f"mean ± half-width of the {label} across seeds" if label
                else "mean of one seed per point: no confidence interval (sweep with seeds = 2 or more)")
        zero = zero_interval_note(stats, metrics)
        if zero:
            note += f"; {zero}"
        summary = [f"<p>{len(ok):,} of {len(rows):,} runs succeeded; {note}.</p>", table(shown)]
    if len(failed):
        summary += [f"<h3>{len(failed):,} runs failed</h3>", table(failed[[*axes, "seed", "error"]], index=False, max_rows=50)]
    figures, notes = _sweep_figures(rows, folder, axes) if len(ok) else ([], [])
    figures += _figures(folder)
    scenario = []
    if spec is not None:
        scenario += ["<h3>The sweep (JSON, a sweep file)</h3>", pre(json.dumps(spec, indent=2, default=str))]
    if base:
        scenario += ["<h3>Its base scenario, resolved</h3>", pre(base)]
    quiet = ("No warnings: no run said its numbers may be wrong." if "warnings" in rows.columns
             else "No warnings kept: these rows are from a lossync that did not keep them.")
    sections = [("Warnings", warnings_block(_warning_counts(rows), none=quiet)),
                ("Summary", "\n".join(summary)),
                ("Figures", (f'<div class="figures">{"".join(figures)}</div>' if figures else "<p>No figure.</p>")
                 + "".join(f"<p>{esc(n)}</p>" for n in notes)),
                ("Reproduce", command_block(commands) or "<p>No command stored with this folder.</p>"),
                ("Scenario", "\n".join(scenario) or "<p>sweep.json is missing: the sweep is not known.</p>")]
    subtitle = f"{len(rows):,} runs, {len(rows.drop_duplicates(axes)):,} points; lossync {_core.__version__}; {CONFIDENCE:.0%} intervals"
    return page(f"lossync sweep: {folder.resolve().name}", subtitle, sections)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _study(folder: Path) -> str:
    study = _read_json(folder / "study.json") or {}
    md = (folder / "report.md").read_text() if (folder / "report.md").is_file() else ""
    images = {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix.lower() in FIGURES and p.is_file()}
    lines = md.splitlines()
    title = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("#") else folder.name
    body = markdown("\n".join(lines[1:]), images)
    shown = {n for n in images if f"]({n})" in md}  # drawn in the claims' text already
    # The study's sweeps: their rows' warnings and base scenarios.
    sweeps = sorted(p.parent for p in folder.rglob("sweep.json"))
    counts: dict[str, int] = {}
    scenarios = []
    for sub in sweeps:
        try:
            rows = load_results(sub)
        except InputFileError:
            continue
        for w, k in _warning_counts(rows).items():
            counts[w] = counts.get(w, 0) + k
        _, base = _sweep_file(sub)
        if base:
            scenarios.append(f"<details{' open' if len(sweeps) == 1 else ''}><summary>{esc(sub.relative_to(folder))} ({len(rows):,} runs)</summary>{pre(base)}</details>")
    data = []
    for p in sorted(folder.glob("results.*")):
        try:
            frame = pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p)
        except (OSError, ValueError):
            continue
        frame = frame[[c for c in frame.columns if not frame[c].map(lambda v: hasattr(v, "__len__") and not isinstance(v, str)).any()]]
        data.append(f"<details><summary>{esc(p.name)}: {len(frame):,} rows</summary>{table(frame, index=False, max_rows=100)}</details>")
    commands = _made_by(study)
    quiet = ("No warnings: nothing the study's runs said casts doubt on these numbers." if sweeps else
             "No warnings kept: this study runs its scenarios one by one and keeps no run's warnings.")
    sections = [("Warnings", warnings_block(counts, none=quiet)), ("Summary", body or "<p>No report.md.</p>")]
    others = [image(images[n], n.rsplit(".", 1)[-1].lower(), n) for n in sorted(images) if n not in shown]
    if others:
        sections.append(("Figures", f'<div class="figures">{"".join(others)}</div>'))
    if data:
        sections.append(("Data", "\n".join(data)))
    sections.append(("Reproduce", command_block(commands) or "<p>No command stored with this folder (a study from before lossync "
                                                             "stored them): <code>lossync reproduce --list</code> names each.</p>"))
    sections.append(("Scenario", "\n".join(scenarios) or "<p>This study runs its scenarios one by one, not as a sweep, and keeps "
                                                         "none of them: its setup is in the Summary above, and the command in "
                                                         "Reproduce runs them again.</p>"))
    protocol = "quick (indicative only)" if study.get("quick") else "full fidelity" if study else "protocol not stored"
    subtitle = f"study {study.get('study', folder.name)}, {protocol}, engine {study.get('engine', 'n/a')}; lossync {_core.__version__}"
    return page(title, subtitle, sections)
