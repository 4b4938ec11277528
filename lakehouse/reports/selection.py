"""`lakehouse report selection`: online policy selection, a campaign on week resamples of SWF logs, then
its tables (lakehouse.studies.selection)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lakehouse.base.comma_lists import fractions, split_list
from lakehouse.base.errors import LakehouseError
from lakehouse.base.lake import Lake
from lakehouse.base.report import Argument, Call, Option, Report, Shown, campaign_option, view_option
from lakehouse.models import selection as selection_topic

if TYPE_CHECKING:  # the study loads when the report runs, not when a command lists the reports
    from lakehouse.campaigns.grid import Grid
    from lakehouse.sim.options import QueueOrder, Selector
    from lakehouse.studies.selection import SelectionTables

SUMMARY = """Online policy selection for EASY, evaluated on week resamples: for each log and resample,
every candidate as a fixed queue policy and each selector (full, noisy and egreedy at epsilon 0.3
unless --selectors says otherwise) at each period, over the published study's ten candidates unless
--policies says otherwise, as a campaign (stored as it runs; Ctrl-C keeps the finished runs and the
same command resumes).

Prints per log and strategy the ratio of its average wait to EASY-FCFS's on the same resample (mean,
10th and 90th percentiles over the resamples), stored as analysis.selection_runs, and the same ratio
week by week as analysis.selection_curves (docs/selection.md).  `--plots DIR` writes the
improvement-over-time and policy-share figures.

Example: `lakehouse report selection KTH CTC --view jobs_strong --resamples 20 --plots figures`"""


def _policies(text: str) -> list[QueueOrder]:
    from lakehouse.sim.options import Policy, parse_policy

    return list(Policy) if text.strip() == "all" else [parse_policy(p) for p in split_list(text)]


def _periods(text: str) -> list[int]:
    from lakehouse.sim.options import parse_period

    periods = [parse_period(p) for p in split_list(text)]
    if not periods:
        raise LakehouseError("give at least one period: day, week or seconds")
    return periods


def _probabilities(text: str) -> list[float]:
    return [float(value) for value in fractions(text)]


def _selectors(text: str) -> list[Selector]:
    from lakehouse.sim.options import Selector, choose

    return [] if text.strip() == "none" else [choose(Selector, s) for s in split_list(text)]


def _threshold(text: str) -> int | None:
    from lakehouse.campaigns.grid import parse_threshold

    return parse_threshold(text)


OPTIONS = (
    campaign_option("selection", "The campaign that stores the runs (a re-run resumes it)."),
    view_option("jobs_clean"),
    Option(
        "machine_size",
        None,
        "Processors for every log, or LOG=N (repeat) [default: the study's machines: CEA-Curie on 80,640, the "
        "others as each log's view].",
        holds=list,
    ),
    Option("resamples", 100, "Week resamples per log.", minimum=1, maximum=1_000),
    Option("seed", 0, "Seed of the resamples (and of the selectors' draws)."),
    Option(
        "policies",
        None,
        "Candidate policies, comma-separated, or all (the twelve); fcfs must be one [default: the paper's ten, "
        "fcfs to srf].",
        holds=str,
        reads=_policies,
    ),
    Option("periods", "week,day", "Selection periods, comma-separated: day, week, seconds.", reads=_periods),
    Option(
        "selectors",
        "full,noisy,egreedy",
        "Selectors, comma-separated: full, noisy, egreedy, egreedy-started (a bandit charging the jobs started in "
        "each period, as the authors' simulator does) or none (the fixed policies alone).",
        reads=_selectors,
    ),
    Option(
        "epsilon",
        "0.3",
        "The bandits: probabilities of a random policy, comma-separated, each in [0, 1].",
        reads=_probabilities,
    ),
    Option(
        "threshold",
        "none",
        "Seconds of wait after which a job goes first whatever the policy (the paper's Theta), or none.",
        reads=_threshold,
    ),
)


def _campaign(lake: Lake, call: Call) -> Grid:
    """The study's campaign on the logs named: every setting checked, and every log's weeks counted,
    before any run."""
    from lakehouse.base.job_views import View, log_jobs
    from lakehouse.base.log_names import select_logs
    from lakehouse.base.machine import parse_machine_sizes
    from lakehouse.campaigns.grid import Grid
    from lakehouse.campaigns.resample import week_count
    from lakehouse.sim.options import Policy
    from lakehouse.studies.selection import PAPER_POLICIES, selection_settings, study_machine_sizes

    o = call.read(OPTIONS)
    view = View(o["view"])
    candidates = o["policies"] or [Policy(p) for p in PAPER_POLICIES]
    settings = selection_settings(
        o["resamples"],
        o["seed"],
        [str(p) for p in candidates],
        o["periods"],
        o["epsilon"],
        o["threshold"],
        o["selectors"],
    )
    every, per_log = parse_machine_sizes(o["machine_size"] or [])
    with lake.reading():
        chosen = select_logs(call.argument, lake.log_names())
        if every is None:  # the study's machines (CEA-Curie's 80,640) unless told otherwise
            per_log = study_machine_sizes(chosen, per_log)
        for log in chosen:
            weeks = week_count(log_jobs(lake, log, view, columns=["submit_time"]))
            if weeks < 2:
                raise LakehouseError(f"{log}: resampling needs jobs in at least 2 weeks of swf.{view}, it has {weeks}")
    return Grid(
        name=o["name"],
        logs=tuple(call.argument),
        view=str(view),
        machine_size=every,
        machine_sizes=per_log,
        explicit=tuple(settings),
    )


def _plot_selection(lake: Lake, result: SelectionTables, folder: Path) -> list[Path]:
    from lakehouse.studies.selection_plots import selection_plots

    return selection_plots(result.rows, result.curves, folder)


def _present(results: list[SelectionTables], terminal: bool) -> list[Shown]:
    return [
        Shown(f"policy selection ({r.campaign}): average wait / EASY-FCFS's, over resamples", r.table) for r in results
    ]


def _selection_tables(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.studies.selection import selection_tables

    return selection_tables(*args, **kwargs)


def _store_tables(*args: Any, **kwargs: Any) -> Any:
    from lakehouse.studies.selection import store_tables

    return store_tables(*args, **kwargs)


REPORT: Report[str, SelectionTables] = Report(
    "selection",
    "Online policy selection (lakehouse report selection)",
    selection_topic.TABLES,
    _selection_tables,
    _store_tables,
    lambda result: [("average wait / EASY-FCFS's, over resamples", result.table)],
    _plot_selection,
    options=OPTIONS,
    order=80,
    summary=SUMMARY,
    doing=lambda campaign: f"reading the runs of campaign {campaign}...",
    argument=Argument("logs", "Logs: names, unique prefixes or globs ('SDSC-*').", many=True, required=True),
    runs=lambda lake, call: ([call.options["name"]], []),
    present=_present,
    campaign=_campaign,
)
