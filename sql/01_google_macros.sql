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
-- Job and task events share their derived columns: the time in seconds and as an instant, flags for
-- the special times, and the names of the event type and of the missing information.
CREATE OR REPLACE MACRO google.named_events(files) AS TABLE
    SELECT
        *,
        google.seconds(time) AS time_s,
        google.instant(time) AS time_at,
        time = 0 AS before_trace,
        time = 9223372036854775807 AS after_trace,
        google.event_name(event_type) AS event,
        google.missing_info_name(missing_info) AS missing
    FROM read_parquet(files);
