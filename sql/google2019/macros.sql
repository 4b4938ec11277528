-- setup: google2019 macros
-- description: Google's 2019 trace (format v3): its clock and its codes, in one place for every google2019.* view. Times are microseconds from 600 s before the trace start (00:00 PDT, Wednesday 1 May 2019, in every cell), with two special values, 0 (before the trace window) and 2^63-1 (after it), for which seconds and instants are NULL. The code names are the proto's (lakehouse.base.google2019_format declares the same, and a test compares them).
CREATE SCHEMA IF NOT EXISTS google2019;
CREATE OR REPLACE MACRO google2019.special_time(t) AS t IN (0, 9223372036854775807);
CREATE OR REPLACE MACRO google2019.seconds(t) AS CASE WHEN NOT google2019.special_time(t) THEN t / 1e6 END;
CREATE OR REPLACE MACRO google2019.instant(t) AS
    CASE WHEN NOT google2019.special_time(t)
         THEN TIMESTAMPTZ '2019-05-01 00:00:00-07:00' + to_microseconds(t - 600000000) END;
-- The wall clock of the cell's own time zone (the cells ran in five: the v3 document).
CREATE OR REPLACE MACRO google2019.time_zone(cell) AS
    CASE cell WHEN 'a' THEN 'America/New_York' WHEN 'b' THEN 'America/Chicago' WHEN 'c' THEN 'America/New_York'
              WHEN 'd' THEN 'America/New_York' WHEN 'e' THEN 'Europe/Helsinki' WHEN 'f' THEN 'America/Chicago'
              WHEN 'g' THEN 'Asia/Singapore' WHEN 'h' THEN 'Europe/Brussels' END;
CREATE OR REPLACE MACRO google2019.local_time(t, cell) AS timezone(google2019.time_zone(cell), google2019.instant(t));
CREATE OR REPLACE MACRO google2019.event_name(e) AS
    ['SUBMIT', 'QUEUE', 'ENABLE', 'SCHEDULE', 'EVICT', 'FAIL', 'FINISH', 'KILL', 'LOST', 'UPDATE_PENDING',
     'UPDATE_RUNNING'][e + 1];
CREATE OR REPLACE MACRO google2019.machine_event_name(e) AS ['EVENT_TYPE_UNKNOWN', 'ADD', 'REMOVE', 'UPDATE'][e + 1];
CREATE OR REPLACE MACRO google2019.collection_type_name(c) AS ['JOB', 'ALLOC_SET'][c + 1];
CREATE OR REPLACE MACRO google2019.missing_type_name(m) AS
    ['MISSING_TYPE_NONE', 'SNAPSHOT_BUT_NO_TRANSITION', 'NO_SNAPSHOT_OR_TRANSITION', 'EXISTS_BUT_NO_CREATION',
     'TRANSITION_MISSING_STEP', 'TOO_MANY_EVENTS'][m + 1];
CREATE OR REPLACE MACRO google2019.latency_sensitivity_name(s) AS
    ['MOST_INSENSITIVE', 'INSENSITIVE', 'SENSITIVE', 'MOST_SENSITIVE'][s + 1];
CREATE OR REPLACE MACRO google2019.relation_name(r) AS
    ['EQUAL', 'NOT_EQUAL', 'LESS_THAN', 'GREATER_THAN', 'LESS_THAN_EQUAL', 'GREATER_THAN_EQUAL', 'PRESENT',
     'NOT_PRESENT'][r + 1];
-- The priority tiers.  The sources disagree (the v3 document: production 120-200, monitoring above 200; the
-- official colab: free <= 99, best-effort batch 100-115, mid 116-119, production >= 120; Tirmazi et al.,
-- EuroSys'20: production 120-359, monitoring >= 360); this is the colab's rule with the paper's monitoring
-- band, and every view keeps the raw priority beside it.
CREATE OR REPLACE MACRO google2019.tier(priority) AS
    CASE WHEN priority <= 99 THEN 'free' WHEN priority <= 115 THEN 'best-effort batch'
         WHEN priority <= 119 THEN 'mid' WHEN priority <= 359 THEN 'production' ELSE 'monitoring' END;
-- Every event table (machines, collections, instances) derives the same time columns: the time in
-- seconds, as an instant and on the cell's clock, and flags for the special times.  `source` names the
-- stored table ('stored.google2019_machine_events').
CREATE OR REPLACE MACRO google2019.timed_events(source) AS TABLE
    SELECT
        *,
        google2019.seconds(time) AS time_s,
        google2019.instant(time) AS time_at,
        google2019.local_time(time, cell) AS local_time,
        time = 0 AS before_trace,
        time = 9223372036854775807 AS after_trace
    FROM query_table(source);
-- Collection and instance events add the names of the event, the collection type, the tier, the missing
-- data and the latency sensitivity.
CREATE OR REPLACE MACRO google2019.named_events(source) AS TABLE
    SELECT
        *,
        google2019.event_name(type) AS event,
        google2019.collection_type_name(collection_type) AS collection,
        google2019.tier(priority) AS tier,
        google2019.missing_type_name(missing_type) AS missing,
        google2019.latency_sensitivity_name(scheduling_class) AS latency_sensitivity
    FROM google2019.timed_events(source);
