"""One self-contained HTML page for a result (`lossync report`, `Result.report`): its styles inline,
its figures as data: URIs, no script and no link to anything outside the file, so it opens the
same offline, attached to a mail, or years later. The parts: escaped text, tables from pandas,
figures, a small Markdown subset (the studies' report.md), and the page around them."""

from __future__ import annotations

import base64
import html
import io
import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from .results import Result

#: The page's look, inline: a readable column, tables that scroll rather than overflow.
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 72em;
       padding: 0 1.5em; color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 1.8em; }
h3 { font-size: 1.05em; } .sub { color: #555; margin-top: 0; }
pre { background: #f5f5f5; border: 1px solid #ddd; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
code { background: #f5f5f5; padding: 0 0.2em; }
.scroll { overflow-x: auto; } table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; vertical-align: top; }
th { background: #eee; } td.text, th.text { text-align: left; }
img { max-width: 100%; height: auto; border: 1px solid #ddd; } figure { margin: 1em 0; }
.figures { display: flex; flex-wrap: wrap; gap: 0 1.5em; } .figures figure { flex: 1 1 30em; max-width: 100%; }
figcaption { color: #555; font-size: 0.85em; }
.warn { background: #fff4e5; border-left: 4px solid #e67e00; padding: 0.5em 1em; }
.ok { background: #eef7ee; border-left: 4px solid #2e7d32; padding: 0.5em 1em; }
.partial { background: #fdecea; border-left: 4px solid #c62828; padding: 0.5em 1em; }
"""


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def pre(text: str) -> str:
    return f"<pre>{esc(text)}</pre>"


def cell(v: Any) -> str:
    """A number as its table shows it: four significant figures, counts whole, NaN as n/a."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return f"{v:.0f}" if v.is_integer() and abs(v) < 1e15 else f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(cell(x) for x in v)
    return str(v)


def table(frame: pd.DataFrame, index: bool = True, max_rows: int = 200) -> str:
    """An HTML table of `frame` (its first `max_rows` rows, saying how many were left out)."""
    shown = frame.head(max_rows)
    if index:
        shown = shown.reset_index()
    numeric = {c: pd.api.types.is_numeric_dtype(shown[c]) and not pd.api.types.is_bool_dtype(shown[c]) for c in shown.columns}
    head = "".join(f'<th class="{"" if numeric[c] else "text"}">{esc(c)}</th>' for c in shown.columns)
    body = "".join("<tr>" + "".join(f'<td class="{"" if numeric[c] else "text"}">{esc(cell(v))}</td>' for c, v in zip(shown.columns, row))
                   + "</tr>" for row in shown.itertuples(index=False))
    more = f"<p>… and {len(frame) - max_rows:,} more rows (in the folder's data files).</p>" if len(frame) > max_rows else ""
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{more}'


def image(data: bytes, kind: str, caption: str = "") -> str:
    """A figure inline, as a data: URI (PNG or SVG)."""
    mime = "image/svg+xml" if kind == "svg" else "image/png"
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{esc(caption or "figure")}" src="data:{mime};base64,{base64.b64encode(data).decode()}">{cap}</figure>'


def figure_png(fig: Any) -> bytes:
    """A matplotlib figure as PNG bytes, closed afterwards."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=100)
    finally:
        plt.close(fig)
    return buf.getvalue()


def warnings_block(warnings: Iterable[str] | dict[str, int], unit: str = "runs",
                   none: str = "No warnings: nothing said these numbers may be wrong.") -> str:
    """The warnings, each once (a dict: with how many `unit` gave it), or `none`."""
    items = list(warnings.items()) if isinstance(warnings, dict) else [(w, None) for w in dict.fromkeys(warnings)]
    if not items:
        return f'<p class="ok">{esc(none)}</p>'
    lis = "".join(f"<li>{esc(w)}" + ("" if k is None else f" <em>({k} {esc(unit)})</em>") + "</li>" for w, k in items)
    return f'<div class="warn"><p>Why these numbers may be wrong:</p><ul>{lis}</ul></div>'


def command_block(commands: list[tuple[str, str]]) -> str:
    """The commands that reproduce the result, each with a line saying what it is."""
    return "".join(f"<p>{esc(what)}</p>{pre(cmd)}" for what, cmd in commands)


_INLINE = [(re.compile(r"`([^`]+)`"), r"<code>\1</code>"), (re.compile(r"\*\*([^*]+)\*\*"), r"<strong>\1</strong>"),
           (re.compile(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])"), r"<em>\1</em>")]


def _inline(text: str, images: dict[str, bytes]) -> str:
    """Inline Markdown: code, bold, italics; an image from `images` inline, a link as its text and
    its address as text (the page links to nothing)."""
    out = esc(text)
    for pattern, repl in _INLINE:
        out = pattern.sub(repl, out)

    def img(m: re.Match) -> str:
        name = html.unescape(m.group(2))
        if name in images:
            return image(images[name], name.rsplit(".", 1)[-1].lower(), m.group(1))
        return f"[{m.group(1)}: {m.group(2)}]"

    out = re.sub(r"!\[([^\]]*)\]\(([^)]+)\)", img, out)
    return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1 (\2)", out)


def markdown(text: str, images: dict[str, bytes] | None = None) -> str:
    """The Markdown the studies write (report.md): headings, paragraphs, pipe tables, images of
    the folder (`images`: name → bytes), bold, italics and code; links become text."""
    images = images or {}
    out: list[str] = []
    para: list[str] = []
    rows: list[list[str]] = []

    def flush() -> None:
        if para:
            out.append(f"<p>{_inline(' '.join(para), images)}</p>")
            para.clear()
        if rows:
            body = [r for r in rows if not all(re.fullmatch(r":?-+:?", c.strip()) for c in r)]
            head, rest = body[0], body[1:]
            th = "".join(f'<th class="text">{_inline(c.strip(), images)}</th>' for c in head)
            trs = "".join("<tr>" + "".join(f'<td class="text">{_inline(c.strip(), images)}</td>' for c in r) + "</tr>" for r in rest)
            out.append(f'<div class="scroll"><table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table></div>')
            rows.clear()

    for line in text.splitlines():
        heading = re.match(r"(#{1,6})\s+(.*)", line)
        if line.startswith("|"):
            if para:
                flush()
            rows.append(line.strip().strip("|").split("|"))
        elif heading:
            flush()
            level = min(len(heading.group(1)) + 1, 6)  # the page's own title is the only h1
            out.append(f"<h{level}>{_inline(heading.group(2), images)}</h{level}>")
        elif not line.strip():
            flush()
        else:
            if rows:
                flush()
            para.append(line.strip())
    flush()
    return "\n".join(out)


def page(title: str, subtitle: str, sections: list[tuple[str, str]], banner: str = "") -> str:
    """The whole page: a title, a line under it, an optional banner, then (heading, HTML) sections."""
    body = "\n".join(f'<h2 id="{re.sub(r"[^a-z0-9]+", "-", h.lower()).strip("-")}">{esc(h)}</h2>\n{content}' for h, content in sections)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{esc(title)}</title>\n'
            f"<style>{STYLE}</style>\n</head>\n<body>\n<h1>{esc(title)}</h1>\n<p class=\"sub\">{esc(subtitle)}</p>\n{banner}\n"
            f"{body}\n</body>\n</html>\n")


#: A run's headline numbers, in the order `lossync run` prints them, with their words.
HEADLINE = [("utilization", "utilization of the bottleneck"), ("jain", "Jain's fairness index"), ("loss_rate", "loss rate"),
            ("congestion_events", "congestion events"), ("sync_rate_mean", "synchronization rate (mean)"),
            ("mean_queue_pkts", "mean queue (packets)"), ("mean_queueing_delay_s", "mean queueing delay (s)"),
            ("measured_from_s", "statistics from (s)"), ("duration_s", "simulated (s)")]


def run_summary(summary: dict[str, Any]) -> str:
    """A run's summary: the headline numbers, then a table per link and per flow."""
    head = pd.DataFrame([(words, cell(summary.get(key))) for key, words in HEADLINE if key in summary], columns=["metric", "value"])
    parts = [table(head, index=False)]
    scalar = lambda rows: pd.DataFrame([{k: v for k, v in r.items() if not isinstance(v, (list, dict))} for r in rows])  # noqa: E731
    if summary.get("links"):
        parts += ["<h3>Links</h3>", table(scalar(summary["links"]), index=False)]
    if summary.get("flows"):
        parts += ["<h3>Flows</h3>", table(scalar(summary["flows"]), index=False, max_rows=100)]
    return "\n".join(parts)


def run_page(result: Result, figure: bytes | None, commands: list[tuple[str, str]]) -> str:
    """The page of one run: summary, figure, warnings, the commands that reproduce it, the scenario."""
    s = result.summary
    banner = ('<p class="partial">PARTIAL: this run was interrupted; its numbers cover the part simulated.</p>'
              if s.get("partial") else "")
    from . import _core

    subtitle = f"engine {s.get('engine')}, seed {s.get('seed')}, lossync {_core.__version__}"
    sections = [("Warnings", warnings_block(result.warnings)), ("Summary", run_summary(s))]
    if figure is not None:
        sections.append(("Figure", image(figure, "png", "windows, queue and utilization against time")))
    sections.append(("Reproduce", command_block(commands)))
    sections.append(("Scenario", "<p>Resolved: every default written out (<code>scenario.toml</code>).</p>" + pre(result.scenario_toml())))
    return page(f"lossync run: {s.get('scenario', 'run')}", subtitle, sections, banner)
