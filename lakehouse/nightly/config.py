"""The nightly run's settings: which reports run for what changed, and their options.

Every key is optional (the defaults run everything)::

    reports = ["logs", "replays", "predictions", "volatility", "periodicity", "pack"]
    workers = 2                       # replay processes [default: the cores]

    [machine_size]                    # processors of the logs named (name, unique prefix or glob), over a header
    "RICC-*" = 8192

    [replays]
    view = "jobs_clean"               # or jobs_strong
    campaign = "nightly"              # the campaign the replays are stored under

    [periodicity]                     # a report's options (lakehouse report NAME --help), by its name
    noise_trials = 200

    [predictions]                     # each changed log's, as `lakehouse report predictions LOG --under 2`
    under = 2.0

An unknown key or a value of the wrong type is an error naming the file, the key and what is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lakehouse.base.budget import workers_problem
from lakehouse.base.campaign_names import RULE, name_problem
from lakehouse.base.errors import SettingsError
from lakehouse.base.job_views import View
from lakehouse.base.log_names import names_log
from lakehouse.base.machine import machine_size_problem
from lakehouse.base.tomlfile import read_toml
from lakehouse.reports import REPORTS as REGISTRY

#: The reports that follow a changed SWF log, and those that follow a changed Google trace: the log
#: summary and a campaign of replays (the nightly run's own), then those of the registry that follow one.
SWF_REPORTS = ("logs", "replays", *(name for name, r in REGISTRY.items() if r.follows == "swf"))
GOOGLE_REPORTS = tuple(name for name, r in REGISTRY.items() if r.follows == "google")
#: Every report a nightly run knows, in the order it runs them.
REPORTS = (*SWF_REPORTS, *GOOGLE_REPORTS)


@dataclass(frozen=True)
class Config:
    reports: tuple[str, ...] = REPORTS
    workers: int | None = None
    machine_size: dict[str, int] = field(default_factory=dict)
    view: str = View.jobs_clean.value
    campaign: str = "nightly"
    #: Whether the page shows each report's figures (False: tables only; the figures take about half of
    #: a small night's time).
    figures: bool = True
    #: The options given to reports of the registry, by report (lakehouse.base.report.Option).
    options: dict[str, dict[str, object]] = field(default_factory=dict)

    def options_of(self, report: str) -> dict[str, object]:
        """A report's options: those the config gives, the others at their defaults."""
        return {o.name: o.default for o in REGISTRY[report].options} | self.options.get(report, {})

    def size_for(self, log: str, known: Sequence[str]) -> int | None:
        """The processors the config gives a log of `known` (by lakehouse.base.log_names' rule: its name, a
        unique prefix or a glob), if any."""
        for pattern, size in self.machine_size.items():
            if names_log(pattern, log, known):
                return size
        return None


#: Each report the nightly run runs (one that follows a family) with options has a table of its own, named
#: after it.
_OPTIONS = {
    name: {o.name: o for o in report.options} for name, report in REGISTRY.items() if report.options and report.follows
}
_TOP = {"reports", "workers", "figures", "machine_size", "replays", *_OPTIONS}
_TABLES = {"replays": {"view", "campaign"}, **{name: set(options) for name, options in _OPTIONS.items()}}


def load(path: Path | None) -> Config:
    """The config of a TOML file, or the defaults."""
    if path is None:
        return Config()
    data = read_toml(path, SettingsError)

    def fail(key: str, why: str) -> SettingsError:
        return SettingsError(f"{path}: {key}: {why}")

    for key in data.keys() - _TOP:
        raise fail(key, f"unknown key; expected one of: {', '.join(sorted(_TOP))}")
    for table, keys in _TABLES.items():
        section = data.get(table, {})
        if not isinstance(section, dict):
            raise fail(table, "expected a table ([" + table + "])")
        for key in section.keys() - keys:
            raise fail(f"{table}.{key}", f"unknown key; expected one of: {', '.join(sorted(keys))}")
    reports = data.get("reports", list(REPORTS))
    if not isinstance(reports, list) or not all(isinstance(r, str) for r in reports):
        raise fail("reports", f"expected a list of names among {', '.join(REPORTS)}")
    for report in reports:
        if report not in REPORTS:
            raise fail("reports", f"unknown report {report!r}; expected some of: {', '.join(REPORTS)}")
    workers = data.get("workers")
    if workers is not None and (problem := workers_problem(workers)):
        raise fail("workers", problem)
    figures = data.get("figures", True)
    if not isinstance(figures, bool):
        raise fail("figures", f"expected true or false, got {figures!r}")
    sizes = data.get("machine_size", {})
    if not isinstance(sizes, dict):
        raise fail("machine_size", 'expected a table of log = processors, e.g. "RICC-*" = 8192')
    for pattern, size in sizes.items():
        if problem := machine_size_problem(size):
            raise fail(f"machine_size.{pattern}", problem)
    replays = data.get("replays", {})
    view = replays.get("view", View.jobs_clean.value)
    if not isinstance(view, str) or view not in {v.value for v in View}:
        raise fail("replays.view", f"unknown view {view!r}; expected one of: {', '.join(View)}")
    campaign = replays.get("campaign", "nightly")
    if name_problem(campaign):
        raise fail("replays.campaign", RULE)
    options: dict[str, dict[str, object]] = {}
    for report, known in _OPTIONS.items():
        for key, value in data.get(report, {}).items():
            if problem := known[key].problem(value):
                raise fail(f"{report}.{key}", problem)
            options.setdefault(report, {})[key] = value
    ordered = tuple(r for r in REPORTS if r in reports)
    return Config(ordered, workers, dict(sizes), view, campaign, figures, options)
