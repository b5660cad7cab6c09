"""The text `lossync compare` prints: the headline metrics per engine, each flow group's
throughput and share, each link's utilization, then every figure's difference from the
reference; an engine that did not finish (a wall-time limit) is a column saying so."""

from __future__ import annotations

import math

import pandas as pd

from .comparison import PER_GROUP, PER_LINK
from .summary_text import fmt


def _signed(v: float, digits: int = 4) -> str:
    return "n/a" if math.isnan(v) else f"{v:+.{digits}g}"


#: Rate units, as `scenario.rate_text` writes them.
RATE_UNITS = ((1e12, "Tb/s"), (1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s"), (1.0, "b/s"))


def _rate_unit(values: list[float]) -> tuple[float, str]:
    """One unit for a table of rates: that of its largest, so that its rows read side by side."""
    top = max((abs(v) for v in values if not math.isnan(v)), default=0.0)
    return next(((scale, unit) for scale, unit in RATE_UNITS if top >= scale), RATE_UNITS[-1])


def _rate(v: float, unit: tuple[float, str], sign: bool = False) -> str:
    return "n/a" if math.isnan(v) else f"{v / unit[0]:{'+' if sign else ''}.4g} {unit[1]}"


def _names(table: pd.DataFrame, prefix: str, suffix: str) -> list[str]:
    """The group or link names of the columns `<prefix><name><suffix>`, in column order."""
    return [c[len(prefix):-len(suffix)] for c in table.columns if c.startswith(prefix) and c.endswith(suffix)]


def compare_text(table: pd.DataFrame, ref: str) -> str:
    engines = list(table.index)
    done = {e: bool(table.loc[e, "finished"]) for e in engines}
    groups = _names(table, PER_GROUP, ".throughput_bps")
    links = _names(table, PER_LINK, ".utilization")
    metrics = [c for c in table.columns
               if not c.startswith(("d.", PER_GROUP, PER_LINK)) and c not in ("warnings", "finished", "status", "bottleneck")]
    label = max([20] + [len(g) + 2 for g in groups] + [len(li) + 2 for li in links])
    width = max(14, *(len(e) + 2 for e in engines))

    def line(name: str, cells: list[str]) -> str:
        return f"{name:<{label}}" + "".join(f"{c:>{width}}" for c in cells)

    def cells(value) -> list[str]:
        return [value(e) if done[e] else "not finished" for e in engines]

    out = [line("metric", engines)]
    out += [line(m, cells(lambda e, m=m: fmt(table.loc[e, m]))) for m in metrics]
    names = {table.loc[e, "bottleneck"] for e in engines if done[e]}
    if names:  # one link for every engine (`compare.LINK_COMPARED`)
        out.append(f"(utilization, loss rate, sync rate and mean queue: link {names.pop()} in every engine)")
    unit = _rate_unit([table.loc[e, f"{PER_GROUP}{g}.throughput_bps"] for e in engines for g in groups if done[e]])
    out += ["", line("flow group", engines) + "   (throughput, share of the total)"]
    for g in groups:
        out.append(line(g, cells(lambda e, g=g: _rate(table.loc[e, f"{PER_GROUP}{g}.throughput_bps"], unit))))
        out.append(line("", cells(lambda e, g=g: f"{table.loc[e, f'{PER_GROUP}{g}.share']:.3f}")))
    out += ["", line("link", engines) + "   (utilization)"]
    out += [line(li, cells(lambda e, li=li: f"{table.loc[e, f'{PER_LINK}{li}.utilization']:.4f}")) for li in links]

    if not done[ref]:
        out += ["", f"no differences: the reference, {ref}, did not finish"]
    else:
        def diffs(value) -> list[str]:
            return ["" if e == ref else value(e) if done[e] else "not finished" for e in engines]

        out += ["", f"difference from {ref}", line("metric", engines)]
        out += [line(m, diffs(lambda e, m=m: _signed(table.loc[e, "d." + m]))) for m in metrics]
        out += ["", line("flow group", engines) + "   (throughput, share)"]
        for g in groups:
            out.append(line(g, diffs(lambda e, g=g: _rate(table.loc[e, f"d.{PER_GROUP}{g}.throughput_bps"], unit, sign=True))))
            out.append(line("", diffs(lambda e, g=g: _signed(table.loc[e, f"d.{PER_GROUP}{g}.share"], 3))))
        out += ["", line("link", engines) + "   (utilization)"]
        out += [line(li, diffs(lambda e, li=li: _signed(table.loc[e, f"d.{PER_LINK}{li}.utilization"], 3))) for li in links]
    unfinished = [e for e in engines if not done[e]]
    if unfinished:
        out += [""] + [f"{e}: {table.loc[e, 'status']}" for e in unfinished]
    return "\n".join(out)


__all__ = ["compare_text"]
