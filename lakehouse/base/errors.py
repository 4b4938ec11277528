"""Exceptions users see: each names the file (and line) it is about."""


class LakehouseError(Exception):
    """Base class: the CLI prints these as one clear line and exits with `exit_code`."""

    #: 1, or 2 for a value given that cannot be used at all (as the command line says of a bad option).
    exit_code = 1


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


class SettingsError(LakehouseError, ValueError):
    """An option or setting the library cannot use (an unknown choice, a value out of range)."""


class OrderError(SettingsError):
    """A queue order that cannot be used: a formula that does not parse, reads a column the jobs lack
    or that is not numeric, or gives no finite key for any job.  Exit code 2 on every command, as a
    formula that does not parse is refused while the options are read."""

    exit_code = 2


class TooLittleDataError(LakehouseError, ValueError):
    """The data is too short or too small for the analysis (the message says what is needed)."""


class RunSkipped(TooLittleDataError):
    """One run of a report that the report chose itself (the user named nothing) has nothing to work
    on, which only the run could find out: its command says so and goes on with the other runs."""


class QueryError(LakehouseError):
    """DuckDB refused or failed a query on the lake (a typo in user SQL, a view that cannot bind)."""


class ResourceError(LakehouseError):
    """A query needs more memory than its budget allows, even spilling (the message names the setting)."""


class SqlFileError(LakehouseError):
    """A file of `sql/` (a view, a macro, a query, an audit) cannot be read or made in the catalog (the
    message names the file)."""


class CatalogError(LakehouseError, RuntimeError):
    """A DuckLake catalog that cannot be reached or read; the message names it (never its password)."""


class OutputError(LakehouseError):
    """An output file (--output, --jobs-out, an export, a figure) cannot be written there."""


class RenderError(LakehouseError):
    """A result cannot be written in the chosen format or place."""


class SimulationInputError(LakehouseError, ValueError):
    """A workload or settings the simulator cannot replay.

    `what` says what is wrong; `job_ids` are the first offending jobs (at most ten) out of `count`,
    as data for a caller to look up, and in the message; `kind` names the problem for callers to
    branch on (never on the text): the engine's kinds (`machine_size`, `wider_than_machine`,
    `no_processors`, ...: `lakehouse._native.INPUT_ERROR_KINDS`), `setting` (an unknown choice or a
    value Python checks) or `input` (the jobs' columns)."""

    def __init__(self, what: str, job_ids: list[int] | None = None, count: int = 0, *, kind: str = "input"):
        self.what = what
        self.job_ids = list(job_ids or [])
        self.count = count
        self.kind = kind
        super().__init__(str(self))

    @property
    def exit_code(self) -> int:  # type: ignore[override]
        return OrderError.exit_code if self.kind == ORDER_KIND else 1

    def __str__(self) -> str:
        if not self.count:
            return self.what
        more = f" and {self.count - len(self.job_ids)} more" if self.count > len(self.job_ids) else ""
        ids = ", ".join(map(str, self.job_ids))
        return f"{self.what}: job id {ids}{more} ({self.count} job{'s' if self.count != 1 else ''})"

    def __reduce__(self) -> tuple[object, ...]:  # pickled by campaign workers: keep the ids as data
        return (_simulation_input_error, (self.what, self.job_ids, self.count, self.kind))


#: The `kind` of a SimulationInputError about the queue order (an OrderError's, as the replay saw it).
ORDER_KIND = "order"


def _simulation_input_error(what: str, job_ids: list[int], count: int, kind: str) -> SimulationInputError:
    return SimulationInputError(what, job_ids, count, kind=kind)
