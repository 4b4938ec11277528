"""The compiled core (Rust, `sim/src/python.rs`): the SWF tokenizer, the backfilling engine and the
packing loop.  Columns cross as numpy arrays; every call releases the GIL while it works.  Checked
against the extension by `python -m mypy.stubtest lakehouse._native` (`make lint`)."""

from typing import TypeAlias, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "InputError",
    "ParsedSwf",
    "Schedule",
    "__version__",
    "ENGINE_BUILD",
    "SWF_MAX_SECONDS",
    "SWF_MAX_PROCS",
    "MAX_MACHINE_SIZE",
    "INPUT_ERROR_KINDS",
    "BUILT_IN_POLICIES",
    "POLICY_PRESETS",
    "FORMULA_VARIABLES",
    "MAX_FORMULA_BYTES",
    "PREDICTORS",
    "ALGORITHMS",
    "BACKFILLS",
    "CORRECTIONS",
    "COMPATS",
    "USAGE_HALF_LIFE",
    "_panic_inside_guard",
    "check_settings",
    "eloss_values",
    "processor_allocation",
    "hmm_forward_backward",
    "hmm_score",
    "hmm_viterbi",
    "machine_size_problem",
    "pack_tasks",
    "parse_swf",
    "predictor_spec",
    "policy_spec",
    "policy_columns",
    "simulate",
]

__version__: str  # the crate's version
ENGINE_BUILD: str  # the crate's version + a digest of the engine's sources: which build made a stored result
SWF_MAX_SECONDS: int  # largest magnitude of an SWF time field or UnixStartTime accepted at ingest
SWF_MAX_PROCS: int  # largest processor count accepted at ingest
MAX_MACHINE_SIZE: int  # the largest machine the engine replays (processors are counted in 32 bits)
INPUT_ERROR_KINDS: list[str]  # every `kind` an InputError can have
BUILT_IN_POLICIES: list[str]  # the twelve built-in queue orders, in their order
POLICY_PRESETS: list[tuple[str, str, str]]  # (name, formula, source) of each named formula
FORMULA_VARIABLES: list[tuple[str, str]]  # (name, meaning) of each variable a formula reads
MAX_FORMULA_BYTES: int  # the longest formula accepted
PREDICTORS: list[tuple[str, str, bool]]  # (as written, meaning, gives distributions) of each predictor
ALGORITHMS: list[str]  # the backfilling algorithms' names
BACKFILLS: list[str]  # the backfill orders' names
CORRECTIONS: list[str]  # the corrections' names (what an outlived prediction becomes)
COMPATS: list[str]  # the event semantics' names
USAGE_HALF_LIFE: float  # the default half-life (s) of users' decayed usage (formula variables uu, un)

_Int64s: TypeAlias = npt.NDArray[np.int64]
_Float64s: TypeAlias = npt.NDArray[np.float64]

class InputError(ValueError):
    """A workload or settings the engine refuses; `args` are (what, first offending job ids, their count,
    kind)."""

@final
class ParsedSwf:
    """A tokenized SWF log."""

    line: _Int64s  # line number of each job in the file
    ints: list[_Int64s]  # the 17 integer SWF fields, one column each (field 6 is `avg_cpu_time`)
    avg_cpu_time: _Float64s
    comments: list[tuple[int, str]]  # header and comment lines: (line number, text)
    rejected: list[tuple[int, str, str]]  # (line number, raw text, reason)
    data_lines: int
    crlf_lines: int
    cr_lines: int  # lines ended by a lone carriage return
    bom: bool  # the data began with a UTF-8 byte-order mark (skipped)

@final
class Schedule:
    """What a replay did with each job, in input order, and the selector's choices."""

    start: _Int64s
    end: _Int64s
    backfilled: npt.NDArray[np.bool_]
    corrections: _Int64s
    initial_prediction: _Int64s
    reservation: _Int64s  # -1 where a job never held a reservation (or none were recorded)
    policy: npt.NDArray[np.uint8]  # index into `policies` of the policy in force at each start
    periods: npt.NDArray[np.uint8]  # with a selector: the policy index chosen for each period
    key_not_finite: npt.NDArray[np.bool_]  # under a formula: the job's key was once NaN or infinite

def parse_swf(data: bytes) -> ParsedSwf: ...
def simulate(
    id: _Int64s,
    submit: _Int64s,
    run: _Int64s,
    requested: _Int64s,
    procs: _Int64s,
    user: _Int64s,
    prediction: _Int64s | None,
    settings: object,  # a lakehouse.sim.ReplaySettings, read by attribute
    order: object | None = None,  # policy python: order(queue, now) -> one key per waiting job
    extra: list[tuple[str, _Float64s]] | None = None,  # the columns formulas read, by name
) -> Schedule: ...
def check_settings(settings: object) -> None: ...  # InputError (with its kind) if the engine refuses them
def machine_size_problem(machine_size: int) -> str | None: ...  # the one rule for a machine's size
def pack_tasks(
    c: _Float64s, dx: _Float64s, dy: _Float64s, capacity: float, rule: str, machines: int | None = None
) -> _Int64s | None: ...
def predictor_spec(text: str) -> str: ...  # canonical spelling, or ValueError naming the problem
def policy_spec(
    text: str, columns: list[str] | None = None
) -> str: ...  # canonical spelling, or ValueError with a caret
def policy_columns(text: str) -> list[str]: ...  # the jobs' columns a queue order's formula reads
def eloss_values(parameters: str, predicted: _Float64s, run: _Int64s, procs: _Int64s) -> _Float64s: ...
def processor_allocation(
    start: _Int64s, end: _Int64s, procs: _Int64s, machine_size: int
) -> tuple[_Int64s, _Int64s, _Int64s]: ...
def _panic_inside_guard() -> None: ...

_Float64Matrix: TypeAlias = npt.NDArray[np.float64]

# HMM passes: log emissions (steps x states), start (states), transitions (states x states), float64.
def hmm_forward_backward(
    log_b: _Float64Matrix, start: _Float64s, trans: _Float64Matrix
) -> tuple[float, _Float64Matrix, _Float64Matrix]: ...  # ln P, gamma (steps x states), xi summed (states x states)
def hmm_score(log_b: _Float64Matrix, start: _Float64s, trans: _Float64Matrix) -> tuple[float, _Float64s]: ...
def hmm_viterbi(log_b: _Float64Matrix, start: _Float64s, trans: _Float64Matrix) -> tuple[_Int64s, float]: ...
