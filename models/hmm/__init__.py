"""The workload HMM of SWF logs: its stored tables."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

HMM_FITS_SCHEMA = pa.schema(  # as model.HeldOut.summary
    [
        *fields(pa.string(), "log"),
        pa.field("states", pa.int64()),
        pa.field("init", pa.string()),
        pa.field("poisson", pa.bool_()),
        *fields(pa.float64(), "t_s", "t_r"),
        *fields(pa.int64(), "train_jobs", "valid_jobs", "valid_removed", "rounds"),
        pa.field("converged", pa.bool_()),
        *fields(pa.float64(), "train_bits_per_job", "gain_bits_per_job", "seconds_per_round"),
    ]
)

HMM_FITS = StoredTable(
    "hmm_fits",
    HMM_FITS_SCHEMA,
    grain="one row per SWF log and number of states, as `lakehouse report hmm` last fitted them",
    description=(
        "The workload HMM (states over submit bins of t_s seconds emitting job counts per run-time bin of "
        "ratio t_r) fitted by Baum-Welch on the first half of the log's jobs (train_jobs) and tested on the "
        "rest (valid_jobs; valid_removed = validation jobs in run-time bins never seen in training). "
        "gain_bits_per_job = held-out log-likelihood gain over the single-state model in bits per validation "
        "job; train_bits_per_job = training log-likelihood per job (bits, negative); rounds, converged and "
        "seconds_per_round of Baum-Welch; init = static or kmeans; poisson = with the Poisson load term."
    ),
)

HMM_STATES_SCHEMA = pa.schema(  # as model.HeldOut.states_table
    [
        pa.field("log", pa.string()),
        *fields(pa.int64(), "states", "state"),
        *fields(pa.float64(), "share", "mean_jobs_per_bin", "median_runtime", "self_transition"),
        *fields(pa.list_(pa.float64()), "emissions", "transitions"),
        pa.field("stays", pa.int64()),
        *fields(pa.float64(), "mean_stay", "geometric_p", "model_p"),
    ]
)

HMM_STATES = StoredTable(
    "hmm_states",
    HMM_STATES_SCHEMA,
    grain="one row per SWF log, number of states and state of the fitted workload HMM",
    description=(
        "Each state of a workload HMM fitted by `lakehouse report hmm`: share = mean posterior probability "
        "over the training bins, mean_jobs_per_bin, median_runtime (seconds, lower edge of the median "
        "run-time bin of its emission), self_transition a_jj, emissions (probability per run-time bin, in the"
        " order of the training's bins) and transitions (its row of the matrix); stays = runs of the state in"
        " the Viterbi path, mean_stay in bins, geometric_p = 1 / mean_stay (the geometric law fitted to the "
        "stays) against model_p = 1 - a_jj (the law the model implies)."
    ),
)

TABLES = (
    HMM_FITS,
    HMM_STATES,
)
