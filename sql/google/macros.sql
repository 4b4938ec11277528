-- setup: google macros
-- description: The Google trace's codes, in one place for every google.* view. Its clock: microseconds from 600 s before the trace start (19:00 EDT, Sunday 1 May 2011, per the trace's published schema document), with two special values, 0 (before the trace window) and 2^63-1 (after it), for which seconds and instants are NULL. Job and task events share one list of event types.
CREATE SCHEMA IF NOT EXISTS google;
CREATE OR REPLACE MACRO google.special_time(t) AS t IN (0, 9223372036854775807);
CREATE OR REPLACE MACRO google.seconds(t) AS CASE WHEN NOT google.special_time(t) THEN t / 1e6 END;
CREATE OR REPLACE MACRO google.instant(t) AS
    CASE WHEN NOT google.special_time(t)
         THEN TIMESTAMPTZ '2011-05-01 19:00:00-04:00' + to_microseconds(t - 600000000) END;
CREATE OR REPLACE MACRO google.event_name(e) AS
    ['SUBMIT', 'SCHEDULE', 'EVICT', 'FAIL', 'FINISH', 'KILL', 'LOST', 'UPDATE_PENDING', 'UPDATE_RUNNING'][e + 1];
CREATE OR REPLACE MACRO google.missing_info_name(m) AS
    ['SNAPSHOT_BUT_NO_TRANSITION', 'NO_SNAPSHOT_OR_TRANSITION', 'EXISTS_BUT_NO_CREATION'][m + 1];
-- Volatility: the normalized deviation of a window's 1-second sample from its 5-minute mean.
CREATE OR REPLACE MACRO google.deviation(mu5m, mu1s) AS (mu5m - mu1s) / nullif(mu5m, 0);
-- The high-SLO tasks of the volatility study: scheduling classes 2 and 3, the most latency-sensitive.
CREATE OR REPLACE MACRO google.high_slo(scheduling_class) AS coalesce(scheduling_class IN (2, 3), false);
-- Job and task events share their derived columns: the time in seconds and as an instant, flags for
-- the special times, and the names of the event type and of the missing information.  `source` names the
-- stored table ('stored.google_job_events').
CREATE OR REPLACE MACRO google.named_events(source) AS TABLE
    SELECT
        *,
        google.seconds(time) AS time_s,
        google.instant(time) AS time_at,
        time = 0 AS before_trace,
        time = 9223372036854775807 AS after_trace,
        google.event_name(event_type) AS event,
        google.missing_info_name(missing_info) AS missing
    FROM query_table(source);
-- The per-task volatility of a relation of usage windows (job_id, task_index, mu5m, mu1s, d), with the
-- attributes of a relation of tasks (job_id, task_index, scheduling_class, cpu_request, high_slo,
-- long_running), both given by name: the body of google.task_volatility, which `lakehouse report
-- volatility` also runs on one share of the tasks at a time (the medians need every value of a task at
-- once, in memory: a share is sized to fit the memory limit).
CREATE OR REPLACE MACRO google.task_volatility_of(windows, tasks) AS TABLE
    WITH per_task AS (
        SELECT
            job_id,
            task_index,
            count(*) AS windows,
            count(*) FILTER (mu1s > 0) AS nonzero_samples,
            stddev_samp(mu1s) / nullif(avg(mu1s), 0) AS cv_mu1s,
            stddev_samp(mu5m) / nullif(avg(mu5m), 0) AS cv_mu5m,
            -- Each task's values as lists, for the medians and MADs below: measured a fifth faster than
            -- DuckDB's median and mad aggregates, which keep a copy of the values each.
            list(mu1s) AS mu1s_values,
            list(mu5m) AS mu5m_values,
            avg(abs(d)) AS mean_abs_d,
            avg(mu5m) AS mean_mu5m,
            avg(mu1s) AS mean_mu1s
        FROM query_table(windows)
        GROUP BY job_id, task_index
    ),
    medians AS (
        SELECT *, list_median(mu1s_values) AS median_mu1s, list_median(mu5m_values) AS median_mu5m FROM per_task
    ),
    robust AS (
        SELECT
            * EXCLUDE (mu1s_values, mu5m_values, median_mu1s, median_mu5m, mean_abs_d, mean_mu5m, mean_mu1s),
            -- MAD = the median of the absolute deviations from the median.
            list_median(list_transform(mu1s_values, x -> abs(x - median_mu1s))) / nullif(median_mu1s, 0)
                AS robust_cv_mu1s,
            list_median(list_transform(mu5m_values, x -> abs(x - median_mu5m))) / nullif(median_mu5m, 0)
                AS robust_cv_mu5m,
            mean_abs_d,
            mean_mu5m,
            mean_mu1s
        FROM medians
    )
    SELECT
        p.*,
        t.scheduling_class,
        t.cpu_request,
        coalesce(t.high_slo, false) AS high_slo,
        coalesce(t.long_running, false) AS long_running
    FROM robust AS p
    LEFT JOIN query_table(tasks) AS t ON t.job_id = p.job_id AND t.task_index = p.task_index;
-- The prediction targets of a cloud trace's task (predict.cluster_job_targets): per resource, what the task
-- used and what it requested, where both are positive, and what a unit of it is held with (its walltime).
CREATE OR REPLACE MACRO google.task_resources(cpu, cpu_peak, memory, memory_peak, cpu_request, memory_request, walltime) AS
    list_filter([
        {'resource': 'cpu', 'used': cpu, 'requested': cpu_request, 'freed_weight': walltime},
        {'resource': 'cpu_peak', 'used': cpu_peak, 'requested': cpu_request, 'freed_weight': walltime},
        {'resource': 'memory', 'used': memory, 'requested': memory_request, 'freed_weight': walltime},
        {'resource': 'memory_peak', 'used': memory_peak, 'requested': memory_request, 'freed_weight': walltime}
    ], r -> r.used > 0 AND r.requested > 0);
