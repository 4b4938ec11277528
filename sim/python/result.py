"""What a replay gives back: the schedule of every job, its summary and the settings that made it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lakehouse.base.errors import SettingsError
from lakehouse.sim.options import JobClass, choose
from lakehouse.sim.settings import ReplaySettings

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class SimulationResult:
    """`jobs`: one row per job (input order); `summary`: headline metrics; `settings`: what ran;
    `log`: the log the jobs came from (when they name one); `periods`: with a selector, the policy
    chosen for each period (period, start, policy)."""

    jobs: pl.DataFrame
    summary: dict[str, float | int | None]
    settings: ReplaySettings
    log: str | None = None
    periods: pl.DataFrame | None = None
    warnings: list[str] = field(default_factory=list)  # what was repaired in the input (e.g. missing predictions)

    def __repr__(self) -> str:
        """One line (a notebook prints this, not the frame of every job): what ran on what, and how it went."""
        s = self.settings
        ran = f"{s.algorithm}, {s.selector or s.policy}, {s.backfill} backfilling, {s.predictor} predictions"
        shown = {"mean_wait": "mean wait {:,.0f} s", "mean_bounded_slowdown": "mean bounded slowdown {:.3g}",
                 "utilization": "utilization {:.1%}"}  # fmt: skip
        metrics = ", ".join(
            text.format(value)
            for name, text in shown.items()
            if isinstance(value := self.summary.get(name), int | float)
        )
        on = f"{self.log}, " if self.log else ""
        return f"<SimulationResult: {on}{self.jobs.height:,} jobs on {s.machine_size:,} processors; {ran}; {metrics}>"

    def summary_frame(self, *, with_settings: bool = False, **labels: object) -> pl.DataFrame:
        """One row: the labels, the summary and (`with_settings`) the replay's settings as columns
        (ReplaySettings.columns), so that a row read alone says what produced it."""
        import polars as pl  # loaded while the engine runs (engine._loading_polars), not at import

        return pl.DataFrame([{**labels, **self.summary, **(self.settings.columns() if with_settings else {})}])

    def summary_by(self, by: JobClass | str) -> pl.DataFrame:
        """The summary per job class: `size` (1 processor, <= 10 %, <= 50 %, > 50 % of the machine),
        `length` (run < 1 min, < 1 h, < 10 h, >= 10 h) or `user`; within the same warm-up and
        cool-down as `summary`."""
        from lakehouse.sim.metrics import measured, summary_by  # Polars: see summary_frame

        chosen = choose(JobClass, by)
        window = measured(self.jobs, self.settings.warmup, self.settings.cooldown)
        return summary_by(window, self.settings.machine_size, chosen)

    def plot(
        self,
        output: str | Path | None = None,
        *,
        folder: str | Path | None = None,
        t_from: float | None = None,
        t_to: float | None = None,
        vs: SimulationResult | None = None,
        svg: bool = False,
    ) -> list[Path]:
        """Draw the replay (utilization, queue, a Gantt chart of [t_from, t_to) in seconds, one day
        from the first start by default, and waits per job size) into `output` (one image) or one
        file per figure in `folder`; `vs`: a second replay drawn beside this one, the legends naming each
        by its policy (as named) and its settings off their defaults (`fcfs`, `cube sjbf`), or "this run"
        and "other run" where the two would read alike."""
        # matplotlib and the schedule's frame only for a figure (schedule_io also imports this module)
        from lakehouse.sim.schedule_io import schedule_frame
        from lakehouse.sim.schedule_plots import draw, write

        labels = ("this run", "other run")
        if vs is not None and self.settings.label() != vs.settings.label():  # the legend names the policies
            labels = (self.settings.label(), vs.settings.label())
        figures = draw(
            schedule_frame(self),
            self.settings.machine_size,
            t_from=t_from,
            t_to=t_to,
            vs=None if vs is None else schedule_frame(vs),
            labels=labels,
        )
        return write(figures, None if output is None else Path(output), None if folder is None else Path(folder),
                     svg, "schedule")  # fmt: skip

    def policy_shares(self) -> pl.DataFrame:
        """Share of the periods each candidate policy ran (every candidate listed, in order)."""
        import polars as pl  # loaded while the engine runs (engine._loading_polars), not at import

        selection = self.settings.selection
        if self.periods is None or selection is None:
            raise SettingsError("this replay ran one policy throughout (no selector)")
        candidates = [str(p) for p in selection.policies]
        counts = dict(self.periods.group_by("policy").len().iter_rows())
        total = self.periods.height
        return pl.DataFrame(
            {
                "policy": candidates,
                "periods": [counts.get(p, 0) for p in candidates],
                "share": [counts.get(p, 0) / total for p in candidates],
            }
        )
