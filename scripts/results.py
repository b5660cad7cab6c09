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
        shutil.copy(report.parent / "figure.png", dest / "figure.png")
        shutil.copy(report, dest / "report.md")
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
    ]
    for name in STUDIES:
        report = docs / name / "report.md"
        if not report.exists():
            continue
        text = report.read_text().replace("](figure.png)", f"](results/{name}/figure.png)")
        text = re.sub(r"^# ", "## ", text, flags=re.M)
        lines += [text, ""]
        notes = ROOT / "docs" / "results" / name / "notes.md"
        if notes.exists():
            lines += [notes.read_text(), ""]
    (ROOT / "docs" / "results.md").write_text("\n".join(lines))
    print("wrote docs/results.md;", ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))


if __name__ == "__main__":
    main()
