"""lossync in Jupyter (issue 32, item 3): a run shows tqdm.auto's bar, and a Result shows itself
as HTML, its summary table and its figure inline, nothing fetched from elsewhere. The notebook is
run for real through nbclient, in a fresh kernel."""

import base64
import re

import pytest

import lossync

#: A packet run of about two wall seconds: longer than the bar's delay (progress.BAR_DELAY_S).
RUN = {
    "engine": "packet",
    "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.25}},
    "flows": [{"count": 4, "cc": "reno", "rtt": "40ms..80ms", "slow_start": True}],
    "run": {"duration": 1500, "warmup": "5s"},
}
SHORT = {**RUN, "run": {"duration": 30, "warmup": "5s"}}


def test_the_html_view_is_the_summary_and_the_figure_with_nothing_external():
    r = lossync.run(SHORT, warn=False)
    html = r._repr_html_()
    s = r.summary
    assert f"{s['utilization']:.4f} (bottleneck bottleneck)" in html and f"{s['jain']:.4f}" in html
    assert html.count('<table class="lossync-summary">') == 3  # headline, links, flows
    assert all(f"<td>{f['flow']}</td>" in html for f in s["flows"])
    # The figure is a PNG inside the page; nothing is fetched (no URL but the data one).
    (src,) = re.findall(r'src="([^"]*)"', html)
    assert src.startswith("data:image/png;base64,") and base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert not re.search(r"(https?:|//)[^ ]", html.replace(src, ""))
    # A partial run says so; warnings are listed, escaped.
    r.summary = {**s, "partial": True, "warnings": ["a < b"]}
    html = r._repr_html_()
    assert "partial</b>" in html and "<li>a &lt; b</li>" in html


def test_a_notebook_shows_the_progress_bar_and_the_html_result(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"import lossync\nr = lossync.run({RUN!r}, warn=False)"),
        nbformat.v4.new_code_cell("r"),
    ]
    # A fresh kernel of this interpreter (ipykernel's own spec), which inherits this process's
    # environment and so imports the lossync under test.
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    bar, shown = nb.cells[0].outputs, nb.cells[1].outputs
    # tqdm.auto's widget (ipywidgets installed) or its text bar (without), of simulated seconds.
    widget = [o for o in bar if o.get("output_type") == "display_data" and "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    text = "".join(o.get("text", "") for o in bar if o.get("output_type") == "stream")
    assert widget or re.search(r"simulating: .*sim s", text), bar
    (out,) = [o for o in shown if o.get("output_type") == "execute_result"]
    html = out["data"]["text/html"]
    assert '<table class="lossync-summary">' in html and "utilization" in html and "data:image/png;base64," in html
    # One figure: the HTML view's, not a second one from the inline backend.
    assert not any("image/png" in o.get("data", {}) for o in shown + bar)
