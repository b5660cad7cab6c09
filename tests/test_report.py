"""`lossync report`: one self-contained HTML page for a run, a sweep and a study (issue 32, item 8):
the scenario, the summary, the figures, the warnings and the command that reproduces it, with
nothing linked from outside the file; and what a browser draws of it."""

import html
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import lossync

#: The module fixture makes a run, a sweep and a study once: its tests share one pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("report")

LOSSYNC = [sys.executable, "-m", "lossync"]
#: Attributes through which a page can pull in something from elsewhere.
URL_ATTRIBUTES = {"src", "href", "srcset", "action", "data", "poster", "background", "formaction", "xlink:href"}


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(path: Path) -> Tags:
    page = Tags()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def assert_self_contained(path: Path) -> Tags:
    """No src/href to http(s) (or to anything but the page itself and data: URIs), no external
    stylesheet, no script; every image inline."""
    page = parse(path)
    text = path.read_text(encoding="utf-8")
    for tag, attrs in page.tags:
        assert tag not in ("script", "iframe", "object", "embed", "base"), tag
        assert not (tag == "link" and "stylesheet" in (attrs.get("rel") or "")), attrs
        for name, value in attrs.items():
            if name in URL_ATTRIBUTES and value is not None:
                assert not value.lower().startswith(("http:", "https:", "//", "ftp:", "file:")), (tag, name, value[:80])
                assert value.startswith(("data:", "#")), (tag, name, value[:80])
    assert "url(http" not in text and "@import" not in text
    images = [a for t, a in page.tags if t == "img"]
    assert images and all(a["src"].startswith(("data:image/png;base64,", "data:image/svg+xml;base64,")) for a in images)
    return page


def sections(page: Tags) -> list[str]:
    return [a.get("id") for t, a in page.tags if t == "h2"]


def run_cli(*args, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, LOSSYNC_WORKERS="2")
    r = subprocess.run([*LOSSYNC, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """A run, a sweep and a study made as a user makes them, each with its report."""
    root = tmp_path_factory.mktemp("report")
    run_cli("run", "dumbbell-reno", "--out", "run", "--duration", "200s", "--set", "run.warmup=20s", cwd=root)
    (root / "small.toml").write_text('base = "dumbbell-reno"\nseeds = 2\nset = [\'run.duration="200s"\', \'run.warmup="20s"\']\n'
                                     '[axes]\n"dumbbell.buffer.bdp_fraction" = [0.05, 0.2, 1.0]\n"flows.0.cc" = ["reno", "cubic"]\n')
    run_cli("sweep", "small.toml", "--out", "sweep", cwd=root)
    run_cli("reproduce", "fig11", "--quick", "--out", "study", cwd=root)
    for name in ("run", "sweep", "study"):
        r = run_cli("report", name, cwd=root)
        assert r.stdout.strip() == f"wrote {name}/report.html"
    return {name: root / name for name in ("run", "sweep", "study")}


def test_a_run_has_one_page_with_everything(folders):
    page = assert_self_contained(folders["run"] / "report.html")
    assert sections(page) == ["warnings", "summary", "figure", "reproduce", "scenario"]
    text = "".join(page.text)
    # The command that made it (kept in summary.json's provenance), and the one that re-runs it.
    assert "lossync run dumbbell-reno --out run --duration 200s --set run.warmup=20s" in text
    assert json.loads((folders["run"] / "summary.json").read_text())["provenance"]["command"].startswith("lossync run dumbbell-reno")
    assert "lossync run run/scenario.toml" in text
    assert (folders["run"] / "scenario.toml").read_text().strip() in text  # the scenario, resolved
    summary = json.loads((folders["run"] / "summary.json").read_text())
    assert f"{summary['utilization']:.4g}" in text and "Jain's fairness index" in text
    assert all(w in text for w in summary["warnings"]) and summary["warnings"]  # loss.model = "sync" warns
    assert [p.name for p in folders["run"].glob("*.html")] == ["report.html"]


def test_a_sweep_has_one_page_with_everything(folders):
    page = assert_self_contained(folders["sweep"] / "report.html")
    assert sections(page) == ["warnings", "summary", "figures", "reproduce", "scenario"]
    text = "".join(page.text)
    assert "lossync sweep small.toml --out sweep" in text  # command.json, written by `lossync sweep`
    assert json.loads((folders["sweep"] / "command.json").read_text())["command"] == "lossync sweep small.toml --out sweep"
    assert "12 of 12 runs succeeded" in text and "95% CI (t, n=2)" in text
    assert '"dumbbell.buffer.bdp_fraction"' in text and "[[flows]]" in text  # the sweep, and its base resolved
    assert "(12 runs)" in text  # each warning with how many runs gave it
    # A figure per headline metric, against the buffer, a line per variant.
    assert sum(t == "img" for t, _ in page.tags) == 4


def test_the_sweep_file_on_the_page_reruns_the_sweep(folders, tmp_path):
    # The Scenario section's sweep file, saved and run as the Reproduce section says, gives the
    # same runs: the same resolved scenarios (hashes) and the same numbers.
    text = (folders["sweep"] / "report.html").read_text(encoding="utf-8")
    block = re.search(r"The sweep \(JSON, a sweep file\)</h3>\s*<pre>(.*?)</pre>", text, re.S).group(1)
    (tmp_path / "sweep.json").write_text(html.unescape(block))
    again = lossync.sweep(tmp_path / "sweep.json", tmp_path / "again", workers=2, progress=False)
    before = lossync.load_results(folders["sweep"])
    key = lambda rows: rows.sort_values("scenario_hash")[["scenario_hash", "utilization", "jain"]].reset_index(drop=True)  # noqa: E731
    assert key(again).equals(key(before))


def test_a_study_has_one_page_with_everything(folders):
    page = assert_self_contained(folders["study"] / "report.html")
    assert sections(page) == ["warnings", "summary", "data", "reproduce", "scenario"]
    text = "".join(page.text)
    assert "lossync reproduce fig11 --quick --engine fluid --out study" in text  # study.json
    assert "decreasing m improves link utilization" in text and "paper's claim" in text  # report.md's claims
    assert "[[flows]]" in text and "(20 runs)" in text  # its sweep's base scenario, its runs' warnings


def test_the_python_api_writes_the_same_pages(folders, tmp_path):
    path = lossync.report(folders["sweep"], tmp_path / "sweep.html")
    assert path == tmp_path / "sweep.html"
    assert_self_contained(path)
    result = lossync.run("dumbbell-reno", overrides=['run.duration="200s"', 'run.warmup="20s"'], progress=False, warn=False)
    page = assert_self_contained(result.report(tmp_path / "run.html", command="made in a test"))
    text = "".join(page.text)
    assert "made in a test" in text and "lossync run scenario.toml" in text and result.scenario_toml().strip() in text


def test_a_folder_that_is_no_result_is_one_line(tmp_path):
    r = subprocess.run([*LOSSYNC, "report", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "not a lossync output folder" in r.stderr, r.stderr


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(chromium() is None, reason="Chromium is not installed (scripts/test.sh installs Debian's as root: "
                                               "apt-get install chromium); the page is checked without a browser above")
@pytest.mark.parametrize("kind", ["run", "sweep", "study"])
def test_a_browser_draws_the_page(folders, tmp_path, kind):
    import numpy as np
    from matplotlib.image import imread

    shot = tmp_path / f"{kind}.png"
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
                        f"--screenshot={shot}", "--window-size=1200,2000", (folders[kind] / "report.html").resolve().as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert shot.is_file(), r.stderr[-2000:]
    pixels = imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1200)
    ink = (pixels < 0.9).any(axis=2).mean()  # share of the page not white
    colours = len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    # Text, tables and a figure: ink on part of the page, and the figure's and banners' colours.
    assert 0.03 < ink < 0.9 and colours > 100, (ink, colours)
