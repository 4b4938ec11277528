"""One writer (or reader) process of tests/test_ducklake_catalog.py: `python ducklake_writer.py write
CATALOG DATA TAG N` commits N snapshots of 1,000 rows tagged TAG; `... read CATALOG DATA N` reads the
row count N times and prints how many reads saw a part of a commit (a count not a multiple of 1,000)."""

from __future__ import annotations

import sys
import time

from lakehouse.base.ducklake import Catalog, DuckLake

if __name__ == "__main__":
    action, catalog, data = sys.argv[1:4]
    lake = DuckLake(Catalog.parse(catalog), data)
    if action == "write":
        tag, n = sys.argv[4], int(sys.argv[5])
        for i in range(n):
            lake.write(
                f"{tag} {i}",
                lambda con, i=i: con.execute(f"INSERT INTO lake.t SELECT '{tag}', {i}, range FROM range(1000)"),
            )
        print(f"{tag} committed {n}")
    else:
        partial = 0
        for _ in range(int(sys.argv[4])):
            with lake.connection(read_only=True) as con:
                partial += con.execute("SELECT count(*) FROM lake.t").fetchone()[0] % 1000 != 0
            time.sleep(0.01)
        print(f"partial reads {partial}")
