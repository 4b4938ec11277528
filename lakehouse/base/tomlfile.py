"""Reading the TOML files users give (a campaign's grid, the nightly run's config)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from lakehouse.base.errors import LakehouseError
from lakehouse.base.readable import read_bounded

#: The largest configuration read (a campaign's grid, the nightly run's settings are a few KB).
MAX_TOML = 1 << 20


def read_toml(path: Path, error: type[LakehouseError]) -> dict[str, Any]:
    """The file's tables, or `error` naming the file and what is wrong with it (also: not a regular file,
    such as a FIFO or a link to /dev/zero, or larger than MAX_TOML)."""
    data = read_bounded(path, MAX_TOML, error)
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # tables or arrays nested thousands deep
        raise error(f"{path}: not a configuration: its tables or arrays are nested too deeply") from None
    except ValueError:  # an integer of thousands of digits (Python converts at most 4,300)
        raise error(f"{path}: a value cannot be read: a number with thousands of digits") from None
