"""lakehouse: job logs and cluster traces as a DuckDB/Parquet lake, for scheduling research."""

from lakehouse.lake import Lake

__all__ = ["Lake"]
__version__ = "0.1.0"
