"""Parquet schemas of the tables the reports and campaigns store (the analysis.* views read them): part
of the lake's table registry, so pure pyarrow, light to import."""

from __future__ import annotations

import pyarrow as pa

PERIOD_NAMES = ("hourly", "daily", "weekly")  # as lakehouse.models.spectral.PERIODS

JOB_SINUSOIDS_SCHEMA = pa.schema(
    [
        pa.field("job_id", pa.int64()),
        pa.field("tasks", pa.int64()),
        pa.field("windows", pa.int64()),
        pa.field("c", pa.float64()),
        pa.field("rho", pa.float64()),
        pa.field("phi", pa.float64()),
        pa.field("trend_ratio", pa.float64()),
        pa.field("noise_ratio", pa.float64()),
        *[
            field
            for name in PERIOD_NAMES
            for field in (
                pa.field(f"{name}_ratio", pa.float64()),
                pa.field(f"{name}_phase", pa.float64()),
                pa.field(f"{name}_p", pa.float64()),
            )
        ],
    ]
)


PACKING_SCHEMA = pa.schema(
    [
        pa.field("heuristic", pa.string()),
        pa.field("machines", pa.int64()),
        pa.field("lower_bound", pa.float64()),
        pa.field("ratio_to_bound", pa.float64()),
        pa.field("capacity", pa.float64()),
        pa.field("tasks", pa.int64()),
        pa.field("jobs", pa.int64()),
        pa.field("query", pa.string()),
    ]
)


def _fields(kind: pa.DataType, *names: str) -> list[pa.Field]:
    return [pa.field(name, kind) for name in names]


#: `report periodicity --trace google-2019`: a job's fits (as analysis.job_sinusoids) in its cell's local time.
PERIODICITY_2019_SCHEMA = pa.schema(
    [pa.field("cell", pa.string()), *JOB_SINUSOIDS_SCHEMA, pa.field("daily_peak_local_h", pa.float64())]
)

TASK_VOLATILITY_SCHEMA = pa.schema(  # as google.task_volatility
    [
        *_fields(pa.int64(), "job_id", "task_index", "windows", "nonzero_samples"),
        *_fields(pa.float64(), "cv_mu1s", "cv_mu5m", "robust_cv_mu1s", "robust_cv_mu5m"),
        *_fields(pa.float64(), "mean_abs_d", "mean_mu5m", "mean_mu1s"),
        pa.field("scheduling_class", pa.int64()),
        pa.field("cpu_request", pa.float64()),
        *_fields(pa.bool_(), "high_slo", "long_running"),
    ]
)

VOLATILITY_SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("metric", pa.string()),
        *_fields(pa.float64(), "all", "high_slo", "long_running", "high_slo_long_running"),
    ]
)

SUBSET_FLAGS = _fields(pa.bool_(), "high_slo", "long_running")

#: `report volatility --trace google-2019`: the 2011 method against the windows' percentiles, per cell and tier.
VOLATILITY_2019_SCHEMA = pa.schema(
    [
        pa.field("cell", pa.string()),
        pa.field("tier", pa.string()),
        pa.field("windows", pa.int64()),
        *_fields(
            pa.float64(),
            "mean_abs_d_2011",
            "mean_mad_percentiles",
            "ratio_2011_to_percentiles",
            "window_correlation",
            "median_spread_p90_p10",
            "median_p99_over_mean",
            "share_sample_outside_range",
            "share_zero_sample",
        ),
    ]
)

VOLATILITY_D_HISTOGRAM_SCHEMA = pa.schema(
    [
        pa.field("d_bin", pa.float64()),
        *SUBSET_FLAGS,
        *_fields(pa.int64(), "windows", "zero_mu1s"),
        *_fields(pa.float64(), "sum_d", "sum_abs_d"),
    ]
)

VOLATILITY_RATE_HISTOGRAM_SCHEMA = pa.schema(
    [
        pa.field("has_request", pa.bool_()),
        *_fields(pa.float64(), "mu5m_bin", "mu1s_bin"),
        *SUBSET_FLAGS,
        pa.field("windows", pa.int64()),
    ]
)


PREDICTION_SCORES_SCHEMA = pa.schema(
    [
        *_fields(pa.string(), "source", "scenario", "resource"),
        pa.field("jobs", pa.int64()),
        *_fields(pa.float64(), "loss", "loss_vs_requests", "accuracy", "under_share", "freed_share"),
    ]
)

PREDICTION_JOBS_SCHEMA = pa.schema(
    [
        pa.field("source", pa.string()),
        pa.field("job", pa.int64()),
        *_fields(pa.string(), "resource", "user_key"),
        *_fields(pa.float64(), "submit", "used", "requested"),
        *_fields(pa.int64(), "window_jobs", "workflow_jobs"),
        pa.field("layer", pa.string()),
        pa.field("predicted", pa.float64()),
        pa.field("train", pa.bool_()),
    ]
)


#: analysis.campaign_runs, one row per replay of a campaign (`lakehouse campaign run`).  A public schema:
#: add columns at the end and raise CAMPAIGN_RUNS_VERSION; never rename one.
# 2: the prediction_* columns; 3: policy selection and week resamples; 4: backfill_confidence;
# 5: the distribution metrics (geometric mean wait, percentiles); 6: the jobs' window (where_condition,
# warmup, cooldown) and the usage half-life.
CAMPAIGN_RUNS_VERSION = 6
CAMPAIGN_SETTINGS = ("algorithm", "policy", "backfill", "predictor", "correction")
CAMPAIGN_METRICS = ("mean_wait", "mean_bounded_slowdown", "max_wait", "mean_response", "makespan", "utilization")
#: The percentiles of wait and bounded slowdown a replay's summary gives (lakehouse.sim.metrics).
PERCENTILES = (50, 90, 99)
#: Summary metrics of the waits' distribution, added later (campaign_runs version 5, at the end).
DISTRIBUTION_METRICS = ("geomean_wait",) + tuple(
    f"p{q}_{metric}" for metric in ("wait", "bounded_slowdown") for q in PERCENTILES
)
#: How the run's initial predictions compare with the runtimes (lakehouse.sim.metrics.prediction_errors).
PREDICTION_METRICS = ("prediction_mae", "prediction_mean_eloss", "prediction_under_share")
CAMPAIGN_RUNS_SCHEMA = pa.schema(
    [
        *_fields(pa.string(), "campaign", "log", "view"),
        pa.field("machine_size", pa.int64()),
        *_fields(pa.string(), *CAMPAIGN_SETTINGS),
        pa.field("threshold", pa.int64()),
        pa.field("compat", pa.string()),
        pa.field("tau", pa.float64()),
        *_fields(pa.string(), "variant", "run_key", "jobs_fingerprint", "status", "error"),
        pa.field("jobs", pa.int64()),
        *_fields(pa.float64(), *CAMPAIGN_METRICS),
        pa.field("engine_seconds", pa.float64()),
        pa.field("engine_version", pa.string()),
        pa.field("schema_version", pa.int32()),
        pa.field("finished_at", pa.timestamp("us", tz="UTC")),
        *_fields(pa.float64(), *PREDICTION_METRICS),
        # Policy selection (null without a selector): candidates comma-separated, period in seconds.
        *_fields(pa.string(), "selector", "policies"),
        pa.field("period", pa.int64()),
        *_fields(pa.float64(), "decay", "epsilon"),
        *_fields(pa.int64(), "seed", "resample"),
        # Runs of a selector or a resample: the policy of each period, and per week of submission
        # (from the first) the jobs' total wait and count, for curves over time.
        pa.field("period_policies", pa.list_(pa.string())),
        pa.field("weekly_wait", pa.list_(pa.float64())),
        pa.field("weekly_jobs", pa.list_(pa.int64())),
        # Distribution predictors (hmm, requested-law): the confidence of their backfilling; else null.
        pa.field("backfill_confidence", pa.float64()),
        *_fields(pa.float64(), *DISTRIBUTION_METRICS),
        # The jobs replayed (`--where`, null for all) and the seconds of submissions at each end that were
        # replayed but not counted in the metrics (0 for none).
        pa.field("where_condition", pa.string()),
        *_fields(pa.float64(), "warmup", "cooldown"),
        # The half-life of users' decayed usage (formula variables uu, un), seconds.
        pa.field("usage_half_life", pa.float64()),
    ]
)


#: analysis.campaign_plans, one row per run a `lakehouse campaign run` planned (skipped ones too): which
#: run key each slot of the campaign (log, machine size, variant, tau) had when it was last run, and the
#: inputs that key was made of (the view, and the columns whose fingerprint it holds), so that what a
#: campaign shows is the result of its current inputs and can be checked against the lake as it is now.
CAMPAIGN_PLANS_SCHEMA = pa.schema(
    [
        *_fields(pa.string(), "campaign", "log", "view"),
        pa.field("machine_size", pa.int64()),
        pa.field("tau", pa.float64()),
        *_fields(pa.string(), "variant", "run_key", "jobs_fingerprint"),
        pa.field("columns", pa.list_(pa.string())),
        pa.field("planned_at", pa.timestamp("us", tz="UTC")),
        pa.field("where_condition", pa.string()),
    ]
)

#: analysis.triples, `lakehouse report triples`: per campaign and log, the mean bounded slowdown of the
#: reference triples and of the best and worst learned triple per backfilling order (with its name).
TRIPLE_BACKFILLS = ("queue", "sjbf")
TRIPLES_SCHEMA = pa.schema(
    [
        *_fields(pa.string(), "campaign", "log"),
        pa.field("machine_size", pa.int64()),
        *_fields(pa.float64(), "clairvoyant_queue", "clairvoyant_sjbf", "easy", "easy_plus_plus"),
        *[
            field
            for backfill in TRIPLE_BACKFILLS
            for which in ("best", "worst")
            for field in (
                pa.field(f"{which}_learned_{backfill}", pa.float64()),
                pa.field(f"{which}_learned_{backfill}_triple", pa.string()),
            )
        ],
    ]
)

#: analysis.selection_runs, `lakehouse report selection`: per campaign, log and strategy, the ratio of
#: the average wait to EASY-FCFS's on the same week resample, over the resamples.
SELECTION_RUNS_SCHEMA = pa.schema(
    [
        *_fields(pa.string(), "campaign", "log", "strategy"),
        pa.field("resamples", pa.int64()),
        *_fields(pa.float64(), "mean_ratio", "p10_ratio", "p90_ratio", "mean_wait"),
    ]
)
#: analysis.selection_curves: the same ratio on the jobs submitted up to the end of each week.
SELECTION_CURVES_SCHEMA = pa.schema(
    [
        *_fields(pa.string(), "campaign", "log", "strategy"),
        pa.field("week", pa.int64()),
        *_fields(pa.float64(), "mean_ratio", "p10_ratio", "p90_ratio"),
    ]
)

#: analysis.triples_loo: per campaign and held-out log, the triple leave-one-out selects and how it does.
TRIPLES_LOO_SCHEMA = pa.schema(
    [
        *_fields(pa.string(), "campaign", "held_out", "selected"),
        *_fields(pa.float64(), "selected_bsld", "easy", "easy_plus_plus"),
        *_fields(pa.float64(), "reduction_vs_easy_pct", "reduction_vs_easy_plus_plus_pct"),
    ]
)

#: analysis.reproductions: per study, each published number beside ours (`lakehouse reproduce`).
REPRODUCTIONS_SCHEMA = pa.schema(
    [
        *_fields(pa.string(), "study", "source", "trace", "log", "quantity", "setting"),
        *_fields(pa.float64(), "published", "ours", "difference", "relative_pct"),
        *_fields(pa.string(), "unit", "status", "experiment", "note"),
    ]
)

LOCALITY_SCHEMA = pa.schema(  # as lakehouse.models.locality.GRID_SCHEMA
    [
        *_fields(pa.string(), "log", "variant"),
        *_fields(pa.float64(), "t_s", "t_r"),
        pa.field("jobs", pa.int64()),
        *_fields(pa.float64(), "mi", "shuffled_mi", "shuffled_sd", "locality"),
        pa.field("best", pa.bool_()),
        *_fields(pa.int64(), "shuffles", "seed"),
    ]
)

HMM_FITS_SCHEMA = pa.schema(  # as lakehouse.models.hmm.Study.summary
    [
        *_fields(pa.string(), "log"),
        pa.field("states", pa.int64()),
        pa.field("init", pa.string()),
        pa.field("poisson", pa.bool_()),
        *_fields(pa.float64(), "t_s", "t_r"),
        *_fields(pa.int64(), "train_jobs", "valid_jobs", "valid_removed", "rounds"),
        pa.field("converged", pa.bool_()),
        *_fields(pa.float64(), "train_bits_per_job", "gain_bits_per_job", "seconds_per_round"),
    ]
)

HMM_STATES_SCHEMA = pa.schema(  # as lakehouse.models.hmm.Study.states_table
    [
        pa.field("log", pa.string()),
        *_fields(pa.int64(), "states", "state"),
        *_fields(pa.float64(), "share", "mean_jobs_per_bin", "median_runtime", "self_transition"),
        *_fields(pa.list_(pa.float64()), "emissions", "transitions"),
        pa.field("stays", pa.int64()),
        *_fields(pa.float64(), "mean_stay", "geometric_p", "model_p"),
    ]
)


#: A table of run-time predictions made outside lakehouse (`lakehouse import predictions`): one file per
#: name, read by `--predictor table:NAME`.
IMPORTED_PREDICTIONS_SCHEMA = pa.schema(
    [
        *_fields(pa.string(), "name", "log"),
        pa.field("job_id", pa.int64()),
        pa.field("predicted", pa.float64()),
        *_fields(pa.string(), "source_file", "content_hash"),
        # The SHA-256 of the log file the predictions were imported for (the lake's manifest): a log
        # ingested again from other content makes them refused, since its job ids may name other jobs.
        pa.field("log_content_hash", pa.string()),
    ]
)
