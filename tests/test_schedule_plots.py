"""Figures of a replay: the Gantt chart's pixels at known instants, the time
averages by hand, and the command on a real log."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from lakehouse.base.figures import pyplot
from lakehouse.base.job_views import log_jobs, log_machine_size
from lakehouse.cli import app
from lakehouse.sim import simulate
from lakehouse.sim.schedule_plots import _steps, binned_mean, gantt, pack

from browser import dump_dom, not_blank, screenshot

WHITE = (255, 255, 255)


def five_jobs() -> pl.DataFrame:
    """4 processors: A (2 procs) 0-40 and B (2) 0-20, C (2) 20-60 where B was, D (4) 60-80, then idle."""
    return pl.DataFrame(
        {
            "job_id": [1, 2, 3, 4, 5],
            "submit_time": [0, 0, 0, 0, 0],
            "start_time": [0, 0, 20, 60, 80],
            "end_time": [40, 20, 60, 80, 80],  # E runs 0 s: nothing to draw
            "procs": [2, 2, 2, 4, 1],
            "backfilled": [False, False, True, False, False],
        }
    )


def test_the_gantt_chart_is_busy_and_idle_where_the_schedule_says():
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3), dpi=100)
    gantt(ax, five_jobs(), 4, 0, 100)
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[:, :, :3]
    height = image.shape[0]

    def colour(t: float, row: float) -> tuple[int, ...]:
        x, y = ax.transData.transform((t / 3600, row))  # the axis counts hours
        return tuple(int(v) for v in image[int(round(height - y)), int(round(x))])

    # t = 10: A on rows 0-1, B on rows 2-3.  t = 50: A has ended (rows 0-1 idle), C runs on B's rows.
    # t = 70: D on all four.  t = 90: nothing runs.
    assert all(colour(10, r) != WHITE for r in (0.5, 1.5, 2.5, 3.5))
    assert [colour(50, r) == WHITE for r in (0.5, 1.5, 2.5, 3.5)] == [True, True, False, False]
    assert all(colour(70, r) != WHITE for r in (0.5, 1.5, 2.5, 3.5))
    assert all(colour(90, r) == WHITE for r in (0.5, 1.5, 2.5, 3.5))
    # Jobs are told apart: A and D have different colours.
    assert colour(10, 0.5) != colour(70, 0.5)
    plt.close(fig)


def test_rows_are_packed_in_contiguous_blocks_where_possible():
    pieces = {job: (first, rows) for job, first, rows, _ in pack(five_jobs(), 4)}
    assert pieces[0] == (0, 2) and pieces[1] == (2, 2) and pieces[2] == (2, 2) and pieces[3] == (0, 4)


def test_time_averages_by_hand():
    # 2 processors on [0, 10), 3 more on [5, 20): 2, 5, 3 from 0, 5, 10; nothing after 20.
    times, values = _steps(np.array([0, 5]), np.array([10, 20]), np.array([2, 3]))
    assert binned_mean(times, values, np.array([0.0, 10.0, 20.0, 30.0])).tolist() == [3.5, 3.0, 0.0]


@pytest.fixture(scope="module")
def kth_schedule(kth_lake_session, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("plots") / "kth.parquet"
    run = CliRunner().invoke(app, ["simulate", "KTH", "--lake", str(kth_lake_session.root), "--jobs-out", str(path)])
    assert run.exit_code == 0, run.output
    return path


def test_the_gantt_counts_hours_since_the_first_submission():
    plt = pyplot()
    fig, ax = plt.subplots()
    jobs = five_jobs().with_columns(pl.col(c) + 10_970_000 for c in ("submit_time", "start_time", "end_time"))
    gantt(ax, jobs, 4, 10_970_000 + 3600, 10_970_000 + 7200, origin=10_970_000)
    assert ax.get_xlim() == (1.0, 2.0) and ax.get_xlabel() == "hours since the first submission"
    plt.close(fig)


@pytest.mark.parametrize(
    ("settings", "name"),
    [
        ({}, "EASY"),
        ({"backfill": "sjbf"}, "EASY-SJBF"),
        ({"predictor": "ave2", "backfill": "sjbf", "correction": "incremental"}, "EASY++"),
        ({"policy": "spf"}, "EASY-SPF"),
        ({"algorithm": "conservative", "policy": "lexp", "backfill": "sjbf"}, "Conservative-LEXP"),
        ({"backfill": "sjbf", "predictor": "clairvoyant"}, "EASY-SJBF (clairvoyant)"),
    ],
)
def test_variants_are_named_as_users_name_them(settings, name):
    from lakehouse.sim.options import variant_name

    assert variant_name(**settings) == name


def test_output_and_plots_together_write_both(kth_lake, tmp_path):
    args = ["plot", "schedule", "--log", "KTH", "--lake", str(kth_lake.root), "--backfill", "sjbf",
            "-o", str(tmp_path / "page.png"), "--plots", str(tmp_path / "figures")]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    assert not_blank(tmp_path / "page.png") and len(list((tmp_path / "figures").glob("*.png"))) == 4


def test_every_figure_of_a_real_log_is_drawn(kth_lake, kth_schedule, tmp_path):
    run = CliRunner().invoke(app, ["plot", "schedule", str(kth_schedule), "--plots", str(tmp_path), "--from", "10d"])
    assert run.exit_code == 0, run.output
    files = sorted(tmp_path.glob("*.png"))
    assert [f.name for f in files] == [
        f"schedule-KTH-SP2-EASY-{p}.png" for p in ("gantt", "queue", "utilization", "waits")
    ]
    assert all(not_blank(f) for f in files)
    # Replayed from the log, one page, against the first schedule.
    page = tmp_path / "page.png"
    args = [
        "plot",
        "schedule",
        "--log",
        "KTH",
        "--lake",
        str(kth_lake.root),
        "--vs",
        str(kth_schedule),
        "-o",
        str(page),
    ]
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    assert not_blank(page)


def test_plots_of_two_replays_into_one_folder_are_named_after_each_and_say_what_was_replayed(kth_lake, tmp_path):
    from lakehouse.sim.schedule_plots import file_stem

    for backfill in ("queue", "sjbf"):
        args = ["plot", "schedule", "--log", "KTH", "--lake", str(kth_lake.root), "--backfill", backfill]
        run = CliRunner().invoke(app, [*args, "--plots", str(tmp_path)])
        assert run.exit_code == 0, run.output
    names = {f.name for f in tmp_path.glob("*.png")}
    assert len(names) == 8 and {"schedule-KTH-SP2-EASY-gantt.png", "schedule-KTH-SP2-EASY-SJBF-gantt.png"} <= names
    long = file_stem("KTH min:" + "w/r+" * 300)  # a formula's name stays a valid file name
    assert long.startswith("schedule-KTH-min-w-r+") and len(long) < 110


def test_each_figure_is_headed_by_what_was_replayed(kth_schedule):
    import polars as pl

    from lakehouse.sim.schedule_plots import draw

    figures = draw(pl.read_parquet(kth_schedule), 100, title="KTH EASY-SJBF vs KTH EASY")
    assert {fig.get_suptitle() for fig in figures.values()} == {"KTH EASY-SJBF vs KTH EASY"}


def test_a_replay_draws_itself_from_python(kth_lake, tmp_path):
    log = kth_lake.log_names()[0]
    jobs = log_jobs(kth_lake, log, "jobs_strong")
    result = simulate(jobs, log_machine_size(kth_lake, log, "jobs_strong"))
    (path,) = result.plot(tmp_path / "kth.svg", svg=True)
    assert path.read_text().startswith("<?xml")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "one of them"),
        (["x.parquet", "--log", "KTH"], "one of them"),
        (["missing.parquet"], "no such file"),
        (["{schedule}", "--from", "2d", "--to", "1d"], "must come after"),
    ],
)
def test_bad_requests_get_one_clear_line(kth_schedule, args, message):
    args = [a.replace("{schedule}", str(kth_schedule)) for a in args]
    run = CliRunner().invoke(app, ["plot", "schedule", *args])
    assert run.exit_code == 1 and message in run.output and "Traceback" not in run.output


def test_the_html_page_loads_in_a_headless_browser(kth_schedule, tmp_path):
    page = tmp_path / "kth.html"
    run = CliRunner().invoke(
        app, ["plot", "schedule", str(kth_schedule), "--plots", str(tmp_path), "--html", str(page)]
    )
    assert run.exit_code == 0, run.output
    assert page.stat().st_size > 1_000_000  # Plotly's script is inlined: the page works offline
    dom = dump_dom(page)
    assert dom.stdout.count('class="main-svg"') >= 1  # Plotly drew its figure
    assert "Uncaught" not in dom.stderr
    assert not_blank(screenshot(page, tmp_path / "shot.png"))


def test_two_formulas_that_differ_only_in_symbols_plot_to_two_files():
    from lakehouse.sim.schedule_plots import file_stem

    assert file_stem("KTH easy-min:r*n") != file_stem("KTH easy-min:r/n")
    assert file_stem("KTH EASY-SJBF") == "schedule-KTH-EASY-SJBF"  # (a plain title keeps its name)
