"""lakehouse: job logs and cluster traces as a DuckDB/Parquet lake, for scheduling research."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lakehouse.base.lake import Lake

__all__ = ["Lake"]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # Lazy, so that `from lakehouse import _native` (the engine alone) does not load DuckDB and Polars.
    if name == "Lake":
        from lakehouse.base.lake import Lake

        return Lake
    raise AttributeError(f"module 'lakehouse' has no attribute {name!r}")
