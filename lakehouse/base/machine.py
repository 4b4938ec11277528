"""The size of a machine: the one rule for it, which the engine owns.

The engine counts processors in 32 bits; its `machine_size_problem` (sim/src/engine/error.rs) is the
only place the range is written.  Ingest (`--machine-size`), campaign grids, the nightly configuration
and every replay ask it here, so they all accept and refuse the same sizes with the same words.
"""

from __future__ import annotations

from collections.abc import Iterable

from lakehouse import _native
from lakehouse.base.errors import SettingsError

#: The largest machine the engine replays.
MAX_MACHINE_SIZE: int = _native.MAX_MACHINE_SIZE

#: CEA-Curie's logged partition, 80,640 processors, where the log's header counts the whole machine's
#: 93,312: the machine the SC'15 study (its Table 2.4) and the policy-selection study (its Table 1)
#: replay, as (log name prefix, processors).
CEA_CURIE_PARTITION = ("CEA-Curie", 80_640)


def machine_size_problem(size: object) -> str | None:
    """What is wrong with a machine size, if anything."""
    if not isinstance(size, int) or isinstance(size, bool):
        return f"machine size must be a whole number of processors, got {size!r}"
    if not -(2**63) <= size < 2**63:  # the engine reads 64-bit numbers: it could not even see this one
        return f"machine size must be from 1 to {MAX_MACHINE_SIZE} processors, got {size}"
    return _native.machine_size_problem(size)


def parse_machine_sizes(items: Iterable[object]) -> tuple[int | None, tuple[tuple[str, int], ...]]:
    """`--machine-size` values: N (a number for every log the command means) or LOG=N (for the logs LOG
    names: lakehouse.base.log_names); returns N (or None) and the (LOG, N) pairs.  SettingsError names a
    malformed item; the sizes' range is checked where they are used (`machine_size_problem`)."""
    every: int | None = None
    per_log: list[tuple[str, int]] = []
    for item in items:
        text = str(item).strip()
        pattern, _, number = text.rpartition("=")
        try:
            size = int(number)
        except ValueError:
            raise SettingsError(f"machine size {text!r}: expected a number of processors or LOG=NUMBER") from None
        if "=" not in text:
            every = size
        elif pattern.strip():
            per_log.append((pattern.strip(), size))
        else:
            raise SettingsError(f"machine size {text!r}: the log before '=' is missing")
    return every, tuple(per_log)
