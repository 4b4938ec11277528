"""Reading the TOML files users give (a campaign's grid, the nightly run's config)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from lakehouse.base.errors import LakehouseError


def read_toml(path: Path, error: type[LakehouseError]) -> dict[str, Any]:
    """The file's tables, or `error` naming the file and what is wrong with it."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # tables or arrays nested thousands deep
        raise error(f"{path}: not a configuration: its tables or arrays are nested too deeply") from None
    except ValueError:  # an integer of thousands of digits (Python converts at most 4,300)
        raise error(f"{path}: a value cannot be read: a number with thousands of digits") from None
