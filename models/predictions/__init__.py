"""Resource-usage predictions (sliding windows, workflows, imported tables): their stored tables."""

from __future__ import annotations

import pyarrow as pa

from lakehouse.base.tables import StoredTable, fields

PREDICTION_SCORES_SCHEMA = pa.schema(
    [
        *fields(pa.string(), "source", "scenario", "resource"),
        pa.field("jobs", pa.int64()),
        *fields(pa.float64(), "loss", "loss_vs_requests", "accuracy", "under_share", "freed_share"),
    ]
)

PREDICTIONS_SCORES = StoredTable(
    "predictions_scores",
    PREDICTION_SCORES_SCHEMA,
    grain=(
        "one row per source (SWF log or 'google'), scenario and resource (plus 'overall'), as `lakehouse "
        "report predictions` last scored it"
    ),
    description=(
        "How well each prediction scenario would have replaced the users' requests, on the last 20 % of each "
        "user's jobs: jobs, loss = sum of w |predicted - used| walltime in resource units x hours (w = 1 "
        "under, 0.5 over by default), loss_vs_requests (relative to the users' requests), accuracy = mean of "
        "min(p, u) / max(p, u), under_share = share of jobs under-estimated, freed_share = share of reserved "
        "resource-time freed against the requests. 'overall' rows average the resources."
    ),
)

PREDICTION_JOBS_SCHEMA = pa.schema(
    [
        pa.field("source", pa.string()),
        pa.field("job", pa.int64()),
        *fields(pa.string(), "resource", "user_key"),
        *fields(pa.float64(), "submit", "used", "requested"),
        *fields(pa.int64(), "window_jobs", "workflow_jobs"),
        pa.field("layer", pa.string()),
        pa.field("predicted", pa.float64()),
        pa.field("train", pa.bool_()),
    ]
)

PREDICTIONS_JOBS = StoredTable(
    "predictions_jobs",
    PREDICTION_JOBS_SCHEMA,
    grain=(
        "one row per job (SWF job id, or Google job_id * 100000 + task_index) and resource of each source the"
        " report ran on"
    ),
    description=(
        "The full method's prediction per job and resource (sliding window over the workflow's completed "
        "jobs, maximum predictor, profiles for cold starts, capped at the request): submit, used, requested, "
        "window_jobs (k), workflow_jobs (jobs in its workflow), layer (workflow, user profile, global profile"
        " or request), predicted, train (in the first 80 % of its user's jobs, where k was chosen; scores use"
        " the rest)."
    ),
)

TABLES = (
    PREDICTIONS_SCORES,
    PREDICTIONS_JOBS,
)

#: The traces the report cannot read, each with why in one line (lakehouse.base.traces.refuse_unfed):
#: none, every cloud trace is read through the cluster.* views (predict.cluster_targets).
CANNOT_FEED: dict[str, str] = {}
