"""`lossync plot`: every swept value it averages over is drawn or refused, labels in words and units,
error bars that say what they are, log axes, and points of runs that warned marked."""

import json
import subprocess
import sys

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.legend import Legend

from lossync.errors import ScenarioError
from lossync.plot import facets, label, log_spaced, sweep_figure

BUFFER, X, CC = "dumbbell.buffer.bdp_fraction", "loss.sync.x", "flows.0.cc"
METRICS = ["jain", "loss_rate", "congestion_events", "sync_rate_mean", "mean_queue_pkts", "mean_queueing_delay_s",
           "measured_from_s", "max_queue_pkts", "drops_pkts"]


def rows(seeds=(1, 2, 3), **more_axes):
    """A buffer × X × {reno, cubic} sweep's rows, as issue 32 found them: Reno near 0.1 and CUBIC
    near 0.9, so that a mean over the variants (about 0.5) is no cell's. Every cell's mean differs
    from every other's; Reno's runs at the largest buffer warned; no run lost a packet."""
    out = []
    for buffer in (0.01, 0.1, 1.0):
        for x in (0.3, 1.0):
            for cc, level in (("reno", 0.1), ("cubic", 0.9)):
                for seed in seeds:
                    row = {BUFFER: buffer, X: x, CC: cc, "seed": seed, "status": "ok", "error": "",
                           "utilization": level + 0.05 * buffer + 0.02 * x + 0.001 * seed,
                           "warnings": ["run.duration: no congestion event"] if cc == "reno" and buffer == 1.0 else []}
                    out.append({**row, **dict.fromkeys(METRICS, 0.5), "loss_rate": 0.0})
    frame = pd.DataFrame(out)
    for axis, values in more_axes.items():  # crossed with every row above
        frame = pd.concat([frame.assign(**{axis: v}) for v in values], ignore_index=True)
    return frame


def write_results(frame, out):
    (out / "runs").mkdir(parents=True)
    frame.to_parquet(out / "runs" / "synthetic.parquet", index=False)
    return out


def cell_means(frame, axes):
    return frame.groupby(axes)["utilization"].mean()


def plotted(fig):
    """Every (x, y) point the figure draws as a mean, by panel title and line label."""
    points = []
    for ax in fig.axes:
        for container in ax.containers:  # one ErrorbarContainer per line
            line = container.lines[0]
            points += [(ax.get_title(), container.get_label(), x, y) for x, y in line.get_xydata()]
    return points


def lossync(*args):
    return subprocess.run([sys.executable, "-m", "lossync", *args], capture_output=True, text=True, timeout=300)


def test_a_variant_axis_left_out_by_x_and_hue_becomes_panels_and_no_point_averages_swept_values(tmp_path):
    # On main this drew 6 points near 0.5: each the mean of Reno's and CUBIC's cells.
    frame = rows()
    col, row, note = facets(frame, BUFFER, "utilization", X)
    assert (col, row) == (CC, None) and CC in note
    fig = sweep_figure(frame, BUFFER, "utilization", X, col, row)
    points = plotted(fig)
    cells = cell_means(frame, [BUFFER, X, CC])
    assert len(points) == len(cells) == 12
    # Each point is the mean over seeds of exactly one cell: its panel's variant, its line's X.
    for title, hue, x, y in points:
        cc = title.rsplit("= ", 1)[1]
        assert y == pytest.approx(cells[(x, float(hue), cc)]), (title, hue, x)
    plt.close(fig)
    # The command line says which panels it chose, and draws them.
    res = write_results(frame, tmp_path / "res")
    r = lossync("plot", str(res), "--x", BUFFER, "--hue", X)
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"lossync: one panel per {CC} (--col): otherwise each point drawn would average over its values\n"
    assert (res / f"utilization-vs-{BUFFER}.png").stat().st_size > 0


def test_more_swept_axes_than_the_figure_draws_are_refused_naming_them(tmp_path):
    frame = rows(**{"flows.0.count": [2, 10]})
    res = write_results(frame, tmp_path / "res")
    r = lossync("plot", str(res), "--x", BUFFER, "--hue", X)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("lossync: error: --col/--row: ")
    assert CC in r.stderr and "flows.0.count" in r.stderr and f"{BUFFER}," not in r.stderr
    assert not (res / f"utilization-vs-{BUFFER}.png").exists()
    # One left when both panel options are taken: refused too, in Python as well.
    with pytest.raises(ScenarioError, match="flows.0.count") as e:
        facets(frame, BUFFER, "utilization", X, col=CC, row="seed")
    assert e.value.field == "--col/--row"
    with pytest.raises(ScenarioError, match=CC):
        sweep_figure(rows(), BUFFER, "utilization", X)  # never averages, even called directly
    # Every axis drawn: a grid of panels, each point one cell.
    fig = sweep_figure(frame, BUFFER, "utilization", X, col=CC, row="flows.0.count")
    assert len(plotted(fig)) == 24 and len(fig.axes) == 4
    plt.close(fig)


def test_an_axis_that_follows_the_drawn_ones_is_not_averaged_and_not_refused():
    # A zipped sweep: the capacity moves with the buffer, so each x is one capacity.
    frame = rows()
    frame["dumbbell.capacity"] = frame[BUFFER].map({0.01: "1Gbps", 0.1: "10Gbps", 1.0: "100Gbps"})
    assert facets(frame, BUFFER, "utilization", X, col=CC) == (CC, None, None)


def test_labels_say_the_field_and_its_unit_and_error_bars_say_what_they_are():
    assert label(BUFFER) == "buffer (fraction of the BDP)"
    assert label("utilization") == "utilization (fraction of capacity)"
    assert label("mean_queueing_delay_s") == "mean queueing delay (s)"
    assert label("links.1.buffer.packets") == "buffer, links[1] (packets)"
    assert label("dumbbell.capacity", numeric=False) == "capacity"  # "10Gbps": the values carry it
    assert label("dumbbell.capacity") == "capacity (bit/s)"
    # A queue's parameters in words and units (`threshold` was drawn as "threshold", no unit).
    assert label("dumbbell.queue.threshold") == "marking threshold K (packets)"
    assert label("links.0.queue.step_thresh") == "DualPI2 step threshold, links[0] (s)"
    fig = sweep_figure(rows(), BUFFER, "utilization", X, col=CC)
    assert {ax.get_xlabel() for ax in fig.axes} == {"buffer (fraction of the BDP)"}
    assert fig.axes[0].get_ylabel() == "utilization (fraction of capacity)"
    caption = fig.get_suptitle()
    assert caption.startswith("mean ± 95% CI (Student t) over 3 seeds per point"), caption
    assert fig.legends[0].get_title().get_text() == "synchronization X"
    plt.close(fig)
    # One seed per point: no interval, and the figure says so rather than drawing none silently.
    fig = sweep_figure(rows(seeds=(1,)), BUFFER, "utilization", X, col=CC)
    assert fig.get_suptitle().startswith("mean of one seed per point: no confidence interval")
    plt.close(fig)


def test_points_of_runs_that_warned_are_ringed():
    fig = sweep_figure(rows(), BUFFER, "utilization", X, col=CC)
    rings = [c for ax in fig.axes for c in ax.collections if c.get_label() == "includes runs that warned"]
    # Reno at the largest buffer, both X values: two points.
    assert sum(len(c.get_offsets()) for c in rings) == 2
    assert {float(x) for c in rings for x, _ in c.get_offsets()} == {1.0}
    assert "2 points (ringed) include runs that warned" in fig.get_suptitle()
    plt.close(fig)


def test_log_axes_on_request_and_for_a_log_spaced_sweep(tmp_path):
    frame = rows()
    fig = sweep_figure(frame, BUFFER, "utilization", X, col=CC, logx=True, logy=True)
    assert {(ax.get_xscale(), ax.get_yscale()) for ax in fig.axes} == {("log", "log")}
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["0.01", "0.1", "1"]  # the swept values
    plt.close(fig)
    res = write_results(frame, tmp_path / "res")
    assert not log_spaced(res, BUFFER)
    (res / "sweep.json").write_text(json.dumps({"spec": {"axes": {BUFFER: {"from": 0.01, "to": 1.0, "num": 3, "scale": "log"},
                                                                  X: [0.3, 1.0]}}}))
    assert log_spaced(res, BUFFER) and not log_spaced(res, X)
    # A log axis cannot place 0: refused, not dropped from the figure.
    r = lossync("plot", str(res), "--x", BUFFER, "--hue", X, "--col", CC, "--y", "loss_rate", "--logy")
    assert r.returncode == 2 and r.stderr.startswith("lossync: error: --logy: ") and len(r.stderr.splitlines()) == 1, r.stderr
    r = lossync("plot", str(res), "--x", CC, "--hue", X, "--col", BUFFER, "--logx")
    assert r.returncode == 2 and r.stderr.startswith("lossync: error: --logx: "), r.stderr
    assert lossync("plot", str(res), "--x", BUFFER, "--hue", X, "--col", CC, "--linx").returncode == 0


def test_a_sweep_of_one_axis_is_one_panel_of_one_line():
    frame = rows()
    frame = frame[(frame[CC] == "cubic") & (frame[X] == 1.0)].drop(columns=[CC, X])
    assert facets(frame, BUFFER, "utilization") == (None, None, None)
    fig = sweep_figure(frame, BUFFER, "utilization")
    assert len(fig.axes) == 1 and fig.legends == []  # one line: nothing to tell apart
    assert [y for *_, y in plotted(fig)] == pytest.approx(list(cell_means(frame, [BUFFER])))
    plt.close(fig)


def test_an_axis_drawn_twice_is_refused_naming_the_option():
    with pytest.raises(ScenarioError) as e:
        facets(rows(), BUFFER, "utilization", X, col=X)
    assert e.value.field == "--col"


def test_a_runs_flows_are_labelled_by_group_and_no_two_share_a_colour():
    """Flows were labelled by index alone and the colour cycle repeated after 10 lines."""
    import lossync
    from lossync.plot import figure

    doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}},
           "flows": [{"name": "short", "count": 12, "cc": "reno", "rtt": "20ms"},
                     {"name": "long", "count": 8, "cc": "cubic", "rtt": "200ms"}],
           "run": {"duration": "2s", "record_interval": "0.1s"}}
    fig = figure(lossync.run(doc, warn=False))
    lines = [ln for ln in fig.axes[0].get_lines() if not ln.get_label().startswith("_")]
    assert len(lines) == 20
    assert [ln.get_label().split(" #")[0] for ln in lines] == ["short"] * 12 + ["long"] * 8
    assert len({tuple(matplotlib.colors.to_rgba(ln.get_color())) for ln in lines}) == 20
    plt.close(fig)


def test_the_bbr_figure_has_no_negative_loss_ticks_and_tells_the_engines_apart():
    from lossync.studies.bbr import bbr_figure

    frame = pd.DataFrame([{"capacity": "40Mbps", "engine": eng, "set": v, "buffer": b, "utilization": 0.9,
                           "mean_queueing_delay_s": 0.01, "loss_rate": loss, "share_bbr": 0.5}
                          for eng in ("fluid", "packet") for v in ("reno", "cubic", "bbr", "bbr+cubic")
                          for b, loss in ((0.02, 1e-2), (0.2, 1e-3), (2.0, 0.0))])
    fig = bbr_figure(frame)
    loss_ax = next(ax for ax in fig.axes if ax.get_title().endswith("loss rate"))
    fig.canvas.draw()
    assert loss_ax.get_ylim()[0] >= 0 and min(loss_ax.get_yticks()) >= 0
    fluid, packet = ([ln for ln in loss_ax.get_lines() if ln.get_label().endswith(e)] for e in (", fluid", ", packet"))
    assert fluid and packet
    assert {ln.get_marker() for ln in fluid}.isdisjoint({ln.get_marker() for ln in packet})
    plt.close(fig)


def test_a_table_or_list_valued_axis_is_drawn_or_refused_like_any_other(tmp_path):
    # A variant with parameters and an RTT range as axes, written through Parquet as a sweep writes
    # them (a table comes back as a dict, a list as an array). On main `plot` left both out of its
    # hidden axes and averaged the two CUBICs into each point under "over 2 seeds per point" (there
    # was one), and summarize, report and a --hue of the list raised "unhashable type".
    frame = rows(seeds=(1,))
    frame[CC] = frame[CC].map({"reno": {"variant": "cubic", "beta": 0.5}, "cubic": {"variant": "cubic", "beta": 0.9}})
    frame = pd.concat([frame.assign(**{"flows.0.rtt": [["20ms", "40ms"]] * len(frame)}),
                       frame.assign(**{"flows.0.rtt": [["60ms", "90ms"]] * len(frame)}, utilization=frame["utilization"] + 0.01)],
                      ignore_index=True)
    res = write_results(frame, tmp_path / "res")
    axes = {BUFFER: [0.01, 0.1, 1.0], X: [0.3, 1.0], CC: [{"variant": "cubic", "beta": 0.5}, {"variant": "cubic", "beta": 0.9}],
            "flows.0.rtt": [["20ms", "40ms"], ["60ms", "90ms"]]}
    (res / "sweep.json").write_text(json.dumps({"spec": {"axes": axes, "seeds": 1}}))
    # Two axes left out by --x and --hue: refused, naming both.
    r = lossync("plot", str(res), "--x", BUFFER, "--hue", X)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert CC in r.stderr and "flows.0.rtt" in r.stderr
    # Drawn: panels of the variant, a line per RTT range; each point one cell.
    r = lossync("plot", str(res), "--x", BUFFER, "--hue", "flows.0.rtt", "--col", CC, "--row", X)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    r = lossync("summarize", str(res))
    assert r.returncode == 0, r.stderr
    assert '{beta = 0.5, variant = "cubic"}' in r.stdout and '["60ms", "90ms"]' in r.stdout
    assert len([line for line in r.stdout.splitlines() if 'ms"]' in line]) == 24  # 3 × 2 × 2 × 2 points, a row each
    r = lossync("report", str(res))
    assert r.returncode == 0 and (res / "report.html").stat().st_size > 0, r.stderr


def _layout_boxes(fig):
    """The figure's box, the boxes of its panels and title, and its legends' boxes (the figure's,
    its subfigures' and its panels'), in pixels, as drawn."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = fig.findobj(Legend)
    others = [ax.get_window_extent(renderer) for ax in fig.axes]
    if fig.get_suptitle():
        others.append(fig._suptitle.get_window_extent(renderer))
    return fig.bbox, others, [lg.get_window_extent(renderer) for lg in legends]


@pytest.mark.parametrize("example", ["nsfnet", "dumbbell-reno"])
def test_a_runs_figure_warns_nothing_and_its_legends_sit_inside_it_clear_of_the_panels_and_title(example):
    """`lossync run nsfnet` printed matplotlib's "Tight layout not applied", and its 41 links'
    legend covered the panels below it and ran off the figure (the warnings filter of pyproject
    makes the warning an error here)."""
    import lossync
    from lossync.plot import figure

    result = lossync.run(example, ["run.duration=3", "run.warmup=1"], progress=False, warn=False)
    fig = figure(result)
    page, panels_and_title, legends = _layout_boxes(fig)
    assert len(legends) == (2 if example == "nsfnet" else 1)
    for k, box in enumerate(legends):
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, (k, box, page)
        assert not any(box.overlaps(other) for other in panels_and_title), (k, box)
        assert not any(box.overlaps(other) for other in legends[k + 1:]), k
    plt.close(fig)


def test_the_nsfnet_burst_figure_has_one_legend_beside_its_panels():
    """obs-stats (NSFnet's bursts) drew a legend inside each panel; (b)'s covered the curves at 1.0."""
    import numpy as np

    from lossync.studies.obs import _stats_figure, ceiling

    frame = pd.DataFrame([{"timer_ms": t, "source_segments_histogram": np.r_[0, np.full(ceiling(t), 10)],
                           "flows_histogram": np.array([0, 50, 30, 15, 5]), "lost_flows_histogram": np.array([0, 2, 1])}
                          for t in (1, 5, 10)])
    fig = _stats_figure(frame)
    page, panels_and_title, legends = _layout_boxes(fig)
    assert len(legends) == 1
    assert page.contains(legends[0].x0, legends[0].y0) and page.contains(legends[0].x1, legends[0].y1), legends[0]
    assert not any(legends[0].overlaps(other) for other in panels_and_title), legends[0]
    plt.close(fig)


@pytest.mark.parametrize("axis, values, in_order", [
    ("dumbbell.queue.target", ["10ms", "2ms", "5ms", "1s"], ["2ms", "5ms", "10ms", "1s"]),
    ("dumbbell.capacity", ["10Gbps", "100Mbps", "1Gbps"], ["100Mbps", "1Gbps", "10Gbps"]),
])
def test_swept_values_written_with_units_are_drawn_and_summarized_in_the_order_of_their_values(axis, values, in_order):
    # A swept target of "2ms", "5ms", "10ms" came out as 10ms, 2ms, 5ms (the order of the text),
    # and the line through the points zig-zagged.
    from lossync.stats import summarize

    frame = pd.DataFrame([{axis: v, "seed": s, "status": "ok", "utilization": 0.1 * i + 0.01 * s, "warnings": []}
                          for i, v in enumerate(values) for s in (1, 2)])
    assert list(summarize(frame, ["utilization"]).index) == in_order
    fig = sweep_figure(frame, axis, "utilization")
    line = fig.axes[0].lines[0]
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == in_order and list(line.get_xdata()) == in_order, (ticks, line.get_xdata())
    plt.close(fig)
    # A log axis cannot place categories, and says why (it said the values were not positive).
    with pytest.raises(ScenarioError, match="is written with units, drawn as categories"):
        sweep_figure(frame, axis, "utilization", logx=True)
