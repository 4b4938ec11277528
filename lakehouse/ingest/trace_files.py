"""Ingesting a trace whose every input file becomes one Parquet file of one table (Google's 2019 shards,
Alibaba's 2018 CSV files): the pipeline's source for such files and the ingest loop, written once.

A trace gives its datasets' prefix (`google2019.`: the manifest's dataset `google2019.instance_usage`
is stored as `google2019_instance_usage`) and its function that writes one file aside."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from lakehouse.base.datasets import DATASETS
from lakehouse.base.lake import Lake
from lakehouse.ingest.google import PartResult, file_hash
from lakehouse.ingest.pipeline import Outcome, Task, ingest_files

#: Writes one file's rows (and quarantine) aside: the lake, the task, the share of the budget it may use.
WriteFile = Callable[[Lake, Task, float], Outcome]


@dataclass
class OneFileOneTable:
    """How the pipeline reads a trace of such files: a file is known by its content's hash, committed
    once its table's Parquet file is in place."""

    lake: Lake
    write: WriteFile
    workers: int

    def fingerprint(self, task: Task) -> tuple[str, int]:
        return file_hash(task.path), task.path.stat().st_size

    def committed(self, task: Task) -> bool:
        key = task.dataset.replace(".", "_", 1)
        return DATASETS[key].file(self.lake.root, task.name).exists()

    def process(self, task: Task) -> Outcome:
        return self.write(self.lake, task, 1 / self.workers)

    def failed(self, task: Task, outcome: Outcome) -> None:
        pass


def ingest_each_file(
    lake: Lake,
    tasks: list[Task],
    prefix: str,
    write: WriteFile,
    force: bool = False,
    workers: int | None = None,
    on_file: Callable[[PartResult, int], None] | None = None,
) -> list[PartResult]:
    """Run the tasks through the pipeline; one result per file (and per unusable entry), `on_file` told
    of each as it ends (with its size in bytes, for progress)."""
    workers = workers or os.cpu_count() or 1

    def done(task: Task, outcome: Outcome) -> None:
        if on_file is not None:
            on_file(PartResult.of(task, outcome, prefix=prefix), outcome.size)

    source = OneFileOneTable(lake, write, workers)
    outcomes = ingest_files(lake, tasks, source, force=force, workers=workers, on_done=done)
    return [PartResult.of(task, outcome, prefix=prefix) for task, outcome in outcomes]
