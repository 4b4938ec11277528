"""Exceptions users see: each names the file (and line) it is about."""


class LakehouseError(Exception):
    """Base class: the CLI prints these as one clear line and exits non-zero."""


class BrokenFileError(LakehouseError):
    """A whole input file cannot be ingested (truncated, binary, empty, not the expected format)."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class LakeBusyError(LakehouseError):
    """Another writer holds the lake's lock."""


class NoLakeError(LakehouseError):
    """The lake folder or its catalog does not exist yet."""


class SimulationInputError(LakehouseError, ValueError):
    """A workload the simulator cannot replay (the message names the offending job ids)."""
