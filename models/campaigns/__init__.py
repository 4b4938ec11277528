"""Simulation campaigns (lakehouse.campaigns runs them): the tables every campaign's runs and plans are stored in."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

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
        *fields(pa.string(), "campaign", "log", "view"),
        pa.field("machine_size", pa.int64()),
        *fields(pa.string(), *CAMPAIGN_SETTINGS),
        pa.field("threshold", pa.int64()),
        pa.field("compat", pa.string()),
        pa.field("tau", pa.float64()),
        *fields(pa.string(), "variant", "run_key", "jobs_fingerprint", "status", "error"),
        pa.field("jobs", pa.int64()),
        *fields(pa.float64(), *CAMPAIGN_METRICS),
        pa.field("engine_seconds", pa.float64()),
        pa.field("engine_version", pa.string()),
        pa.field("schema_version", pa.int32()),
        pa.field("finished_at", pa.timestamp("us", tz="UTC")),
        *fields(pa.float64(), *PREDICTION_METRICS),
        # Policy selection (null without a selector): candidates comma-separated, period in seconds.
        *fields(pa.string(), "selector", "policies"),
        pa.field("period", pa.int64()),
        *fields(pa.float64(), "decay", "epsilon"),
        *fields(pa.int64(), "seed", "resample"),
        # Runs of a selector or a resample: the policy of each period, and per week of submission
        # (from the first) the jobs' total wait and count, for curves over time.
        pa.field("period_policies", pa.list_(pa.string())),
        pa.field("weekly_wait", pa.list_(pa.float64())),
        pa.field("weekly_jobs", pa.list_(pa.int64())),
        # Distribution predictors (hmm, requested-law): the confidence of their backfilling; else null.
        pa.field("backfill_confidence", pa.float64()),
        *fields(pa.float64(), *DISTRIBUTION_METRICS),
        # The jobs replayed (`--where`, null for all) and the seconds of submissions at each end that were
        # replayed but not counted in the metrics (0 for none).
        pa.field("where_condition", pa.string()),
        *fields(pa.float64(), "warmup", "cooldown"),
        # The half-life of users' decayed usage (formula variables uu, un), seconds.
        pa.field("usage_half_life", pa.float64()),
    ]
)

#: Its view is sql/analysis/campaign_runs.sql, which keeps each slot's newest row.
CAMPAIGN_RUNS = StoredTable("campaign_runs", CAMPAIGN_RUNS_SCHEMA, evolves=True)

#: analysis.campaign_plans, one row per run a `lakehouse campaign run` planned (skipped ones too): which
#: run key each slot of the campaign (log, machine size, variant, tau) had when it was last run, and the
#: inputs that key was made of (the view, and the columns whose fingerprint it holds), so that what a
#: campaign shows is the result of its current inputs and can be checked against the lake as it is now.
CAMPAIGN_PLANS_SCHEMA = pa.schema(
    [
        *fields(pa.string(), "campaign", "log", "view"),
        pa.field("machine_size", pa.int64()),
        pa.field("tau", pa.float64()),
        *fields(pa.string(), "variant", "run_key", "jobs_fingerprint"),
        pa.field("columns", pa.list_(pa.string())),
        pa.field("planned_at", pa.timestamp("us", tz="UTC")),
        pa.field("where_condition", pa.string()),
    ]
)

#: Its view is sql/analysis/campaign_plans.sql, which keeps each slot's newest row.
CAMPAIGN_PLANS = StoredTable("campaign_plans", CAMPAIGN_PLANS_SCHEMA, evolves=True)

TABLES = (
    CAMPAIGN_RUNS,
    CAMPAIGN_PLANS,
)
