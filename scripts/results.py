"""Regenerates docs/results.md: runs every study at full fidelity (10 seeds × 3000 s), copies each
figure and report into docs/results/NAME/, and writes the index with every claim.

    python scripts/results.py [--quick] [--work DIR] [--index-only] [--engine E] [STUDY ...]

(`--engine kernel`, as root, adds Linux to bbr-buffers.)
"""

import argparse
import re
import shutil
import time
from pathlib import Path

from lossync.studies import STUDIES, reproduce
from lossync.studies.framework import CROSS_ENGINES, THREE_VERDICTS

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("studies", nargs="*", default=list(STUDIES))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--work", default="lossync-reproduce-all", help="where the data go (not committed)")
    p.add_argument("--index-only", action="store_true", help="only rebuild docs/results.md from docs/results/*/")
    p.add_argument("--engine", default=None, help="the engine to run the studies on (default: each study's own)")
    a = p.parse_args()
    if a.index_only:
        a.studies = []
    docs = ROOT / "docs" / "results"
    timings = {}
    for name in a.studies:
        t0 = time.perf_counter()
        report = reproduce(name, Path(a.work) / name, quick=a.quick, engine=a.engine)
        timings[name] = time.perf_counter() - t0
        dest = docs / name
        dest.mkdir(parents=True, exist_ok=True)
        for name_ in ("figure.png", "engines.png", "report.md"):
            if (report.parent / name_).exists():
                shutil.copy(report.parent / name_, dest / name_)
        print(f"{name}: {timings[name]:.0f} s")
    lines = [
        "# Results: the seed studies, claim by claim",
        "",
        "Every study of Kumar, Xue, Park (JCNC 2014) and the test bed of its slides (fluid engine), and the studies",
        "of seeds 003 (gHSTCP) and 004 (paced XCP and TCP with small buffers; packet engine), and buffer sizing",
        "with BBR against the published results (fluid, packet and Linux side by side), and buffer sizing with today's",
        "routers (RED, CoDel, PIE, FQ-CoDel, DualPI2, DCTCP; packet engine), and seed 001's future work, how much",
        "desynchronization methods lower loss synchronization (packet engine and the paper's model), reproduced by",
        "`lossync reproduce NAME` (regenerate this page with `python scripts/results.py`). Each section is the",
        "study's report: the setup, the figure, and each claim beside what we measured. Where we disagree, the",
        "discussion after the table says why, as far as we know it.",
        "",
        "A claim is judged in the engine its study was written for (the paper's own model, the sync module, for",
        "seed 000's figures) and, where the study has been run there, in the two engines whose loss synchronization",
        "is their own: the default fluid model (`tcp` loss model) and the packet engine with one bottleneck packet",
        "time of send jitter, at the seed's parameters under the protocol each report states; Linux (the kernel",
        "engine, as root) joins them where the seed's setup was a test bed. A claim about the sync module's own",
        "parameters (X, m, the drop policy) is judged in the paper's model only, and its cells say so.",
        "",
    ]
    lines += verdict_table(docs)
    for name in STUDIES:
        report = docs / name / "report.md"
        if not report.exists():
            continue
        text = report.read_text()
        for png in ("figure.png", "engines.png"):
            text = text.replace(f"]({png})", f"](results/{name}/{png})")
        text = re.sub(r"^# ", "## ", text, flags=re.M)
        lines += [text, ""]
        notes = ROOT / "docs" / "results" / name / "notes.md"
        if notes.exists():
            lines += [notes.read_text(), ""]
    (ROOT / "docs" / "results.md").write_text("\n".join(lines))
    print("wrote docs/results.md;", ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))


def _rows(part: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in part.splitlines()
            if line.startswith("| ") and not line.startswith("| paper")]


def verdict_table(docs: Path) -> list[str]:
    """The page's opening table: per study, how many of its claims hold in each engine (of those
    the engine could judge), from the reports' tables."""
    names = ["hold there", *CROSS_ENGINES.values()]
    out = ["| study | its own engine | claims | " + " | ".join(names) + " |", "|---|---|---|" + "---|" * len(names)]
    totals = {n: [0, 0] for n in names}
    for name, study in STUDIES.items():
        report = docs / name / "report.md"
        if not report.exists():
            continue
        model, _, cross = report.read_text().partition(THREE_VERDICTS)
        claims = [r[-1] for r in _rows(model)]
        verdicts = {names[0]: claims}
        rows = _rows(cross)
        header = next((line for line in cross.splitlines() if line.startswith("| paper")), "")
        for k, col in enumerate([c.strip() for c in header.strip().strip("|").split(" | ")][2:]):
            verdicts[col] = [r[2 + k].split(":")[0] for r in rows]
        cells = []
        for n in names:
            v = verdicts.get(n)
            yes, judged = (sum(x == "yes" for x in v), sum(x in ("yes", "**no**") for x in v)) if v else (0, 0)
            if n == CROSS_ENGINES["packet:jitter"] and study.engine == "packet" and not v:
                cells.append("its own")  # (the deterministic packet engine; no jittered run)
            elif not v:
                cells.append("–")
            elif all(x == "not run" for x in v):
                cells.append("not run")
            elif not judged:
                cells.append("n/a")
            else:
                totals[n][0] += yes
                totals[n][1] += judged
                cells.append(f"{yes} of {judged}")
        own = "the paper's model (fluid, sync module)" if study.engine == "fluid" else study.engine
        out.append(f"| [{name}](#{anchor(study.title)}) | {own} | {len(claims)} | " + " | ".join(cells) + " |")
    out.append("| **all** | | | " + " | ".join(f"**{y} of {j}**" if j else "–" for y, j in totals.values()) + " |")
    return ["Claims that hold, of those each engine judged: in the engine the study was written for (the paper's "
            "model for seed 000's figures, the packet engine for the studies of seeds 002-004, whose papers simulated "
            "packets), and in the engines whose loss synchronization is their own. n/a: the engine judges none of the "
            "study's claims (they are about the sync module's parameters, or about packet bursts the fluid model does "
            "not have); not run: the engine refuses the study's scenarios (or Linux needs root); –: not yet run there (Linux "
            "runs the test bed only). "
            "Each study's table of three verdicts follows its report below, with the reason in every cell.", "", *out, ""]


def anchor(title: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


if __name__ == "__main__":
    main()
