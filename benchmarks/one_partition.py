"""One partition of `lakehouse report volatility`, alone in a process (the bench's worker):
`python -m benchmarks.one_partition LAKE WORK NUMBER` (NUMBER -1: open the lake and stop, the baseline)."""

from __future__ import annotations

import sys
from pathlib import Path

from lakehouse.base.lake import Lake
from lakehouse.models.volatility.model import _partition


def main() -> None:
    lake, work, number = Lake(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    with lake.connect() as con, lake.query_errors():
        if number >= 0:
            _partition(con, work, number)


if __name__ == "__main__":
    main()
