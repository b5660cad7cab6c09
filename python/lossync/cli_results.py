"""`lossync summarize`, `plot` and `report`: the commands that read results folders (cli.py
registers them)."""

from __future__ import annotations

import math
from pathlib import Path

import click

from .cli_args import NonEmptyPath, writable_dir
from .errors import ScenarioError
from .io import atomic_write

#: What `lossync summarize` shows without --metric or --all.
HEADLINE = ["utilization", "jain", "loss_rate", "sync_rate_mean", "mean_queueing_delay_s"]


@click.command()
@click.argument("results", type=NonEmptyPath(file_okay=False, exists=True, path_type=Path))
@click.option("--metric", "metrics", multiple=True, help="Metrics to summarize (repeatable; default: the headline ones).")
@click.option("--all", "show_all", is_flag=True, help="Every metric, with mean, std, n and ci95 columns.")
@click.option("--csv", "csv_out", type=NonEmptyPath(dir_okay=False, path_type=Path),
              help="Also write a tidy CSV: the axes, metric, mean, std, n, ci95, warned_runs; one row per point and metric.")
def summarize(results: Path, metrics: tuple[str, ...], show_all: bool, csv_out: Path | None) -> None:
    """Means and 95% confidence intervals (Student's t) across seeds, per point of a sweep; ⚠ marks
    a point whose runs include some that warned."""
    import pandas as pd

    from .stats import LINK_METRICS, METRICS, ci_label, zero_interval_note
    from .stats import summarize as summarize_results
    from .sweeps import load_results, swept_axes

    if csv_out is not None:
        writable_dir("--csv", csv_out.parent)
    frame = load_results(results)
    axes = swept_axes(results)
    for m in metrics:
        if m not in frame.columns or m not in METRICS + LINK_METRICS:
            raise ScenarioError("--metric", f"{m!r} is not a metric of these results (known: {', '.join(METRICS + LINK_METRICS)})")
    chosen = list(metrics) or (METRICS if show_all else HEADLINE)
    table = summarize_results(frame, chosen, axes=axes)
    # The runs of a point: the most values any chosen metric has there (a metric a run leaves
    # undefined, sync_rate_mean without a congestion event, counts fewer; the first one chosen
    # said "seeds 0" beside a mean of three runs).
    seeds = table[[("n", m) for m in chosen]].max(axis=1).astype(int)
    label = ci_label(set(seeds[seeds > 1])) if (seeds > 1).any() else None
    same = zero_interval_note(table, chosen)
    with pd.option_context("display.width", 250, "display.max_columns", 80, "display.max_rows", 1000):
        if show_all:
            click.echo(table.to_string(float_format=lambda v: f"{v:.4g}"))
            notes = [f"ci95: the half-width of the {label} across seeds" if label else "ci95: n/a with one seed per point"]
        else:
            shown = pd.DataFrame({m: [_mean_ci(a, b) for a, b in zip(table[("mean", m)], table[("ci95", m)])] for m in chosen},
                                 index=table.index)
            shown.insert(0, "seeds", seeds)
            warned = table.get(("warned_runs", chosen[0]))  # None for rows of a sweep from before warnings
            if warned is not None and warned.any():
                shown["warned"] = [f"{k} ⚠" if k else "" for k in table[("warned_runs", chosen[0])]]
            click.echo(shown.to_string())
            notes = [f"mean ± half-width of the {label} across seeds" if label
                     else "mean of one seed per point: no confidence interval (sweep with seeds = 2 or more)"]
        if same:
            notes.append(same)
        click.echo("\n" + "\n".join(notes))
    if csv_out is not None:
        tidy = table.stack(level=1, future_stack=True).rename_axis([*table.index.names, "metric"]).reset_index()
        atomic_write(csv_out, lambda p: tidy.to_csv(p, index=False))
    if ("warned_runs", chosen[0]) in table.columns:  # last: a CSV that cannot be written is the one error line
        _say_warned(frame, table[("warned_runs", chosen[0])])
    failed = int((frame["status"] != "ok").sum())
    if failed:  # a point all of whose runs failed is not in the table at all
        click.echo(f"lossync: warning: {failed} of {len(frame)} runs failed and are not in the table (their errors: "
                   f"lossync report {results})", err=True)


def _say_warned(frame, warned) -> None:
    """On stderr: how many points average runs that warned, and the distinct warnings (the first few)."""
    if not warned.any():
        return
    counts: dict[str, int] = {}
    for ws in frame.loc[frame["status"] == "ok", "warnings"]:
        for w in dict.fromkeys(ws):
            counts[w] = counts.get(w, 0) + 1
    click.echo(f"lossync: warning: {(warned > 0).sum()} of {len(warned)} points average runs that warned (⚠: how many); "
               "their numbers may be wrong:", err=True)
    for w, k in list(counts.items())[:5]:
        click.echo(f"  {k} run{'s' if k > 1 else ''}: {w}", err=True)
    if len(counts) > 5:
        click.echo(f"  and {len(counts) - 5} other warnings: the rows' warnings column (lossync.load_results)", err=True)


def _mean_ci(mean: float, ci: float) -> str:
    if math.isnan(mean):
        return "n/a"
    return f"{mean:.4g}" if math.isnan(ci) else f"{mean:.4g} ± {ci:.2g}"


@click.command()
@click.argument("results", type=NonEmptyPath(file_okay=False, exists=True, path_type=Path))
@click.option("--x", "x", required=True, help="Axis on the horizontal axis (a swept field).")
@click.option("--y", "y", default="utilization", show_default=True, help="Metric.")
@click.option("--hue", default=None, help="Axis drawn as separate lines.")
@click.option("--col", default=None, help="Axis drawn as panels side by side (default: the one swept axis --x and --hue leave).")
@click.option("--row", default=None, help="Axis drawn as panels one above the other.")
@click.option("--logx/--linx", default=None, help="Log scale on the horizontal axis (default: if the sweep spaced --x so).")
@click.option("--logy", is_flag=True, help="Log scale on the vertical axis.")
@click.option("--output", type=NonEmptyPath(dir_okay=False, path_type=Path), help="Figure file; .png, .pdf or .svg (default: RESULTS/Y-vs-X.png).")
def plot(results: Path, x: str, y: str, hue: str | None, col: str | None, row: str | None, logx: bool | None, logy: bool,
         output: Path | None) -> None:
    """Line figure of a sweep's metric against an axis: means and 95% confidence intervals across
    seeds. Every swept axis is drawn: one that --x and --hue leave becomes panels; more are refused."""
    from .plot import facets, log_spaced, sweep_figure
    from .sweeps import load_results, swept_axes

    frame, axes = load_results(results), swept_axes(results)
    col, row, note = facets(frame, x, y, hue, col, row, axes)
    output = output or results / f"{y}-vs-{x}.png"
    fmt = output.suffix.lower().lstrip(".")
    if fmt not in ("png", "pdf", "svg"):
        raise ScenarioError("--output", f"{output.name}: the extension names the format: .png, .pdf or .svg")
    fig = sweep_figure(frame, x, y, hue, col, row, logx=log_spaced(results, x) if logx is None else logx, logy=logy, axes=axes)
    if note is not None:
        click.echo(f"lossync: {note}", err=True)
    atomic_write(output, lambda p: fig.savefig(p, dpi=120, format=fmt))
    click.echo(f"wrote {output}")


@click.command(name="report")
@click.argument("folder", type=NonEmptyPath(file_okay=False, exists=True, path_type=Path))
@click.option("--out", "out", type=NonEmptyPath(dir_okay=False, path_type=Path), help="The HTML file to write (default: FOLDER/report.html).")
def report_cmd(folder: Path, out: Path | None) -> None:
    """One self-contained HTML page for the run, sweep or study in FOLDER (what `run --out`,
    `sweep` or `reproduce` wrote): the scenario, the summary, the figures, the warnings and the
    command that reproduces it; the figures are inline and it links to nothing outside itself."""
    from .reporting import report

    if out is not None:
        writable_dir("--out", out.parent)
        out.parent.mkdir(parents=True, exist_ok=True)
    click.echo(f"wrote {report(folder, out)}")
