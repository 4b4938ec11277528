-- name: cluster.traces
-- grain: one row per trace the common views read (SWF logs, Google 2011, Google 2019, Alibaba 2018), ingested or not
-- description: What each trace gives the common cluster.* views and in which units, so that a number is read in its trace's terms: trace, clock (what a time of 0 is; times in cluster.* are seconds of that clock), start_at (the instant of the clock's 0, where the trace gives one), time_zone (where its day is; Google 2019: each cell's own), cpu_unit and memory_unit (never comparable between traces: each normalises its own way), has_machines, has_tasks, usage (what its usage windows measure; NULL: none), and jobs (how many the lake holds of it now).
SELECT
    t.*,
    CASE t.trace
        WHEN 'swf' THEN (SELECT count(*) FROM swf.jobs)
        WHEN 'google-2011' THEN (SELECT count(DISTINCT job_id) FROM google.job_events)
        WHEN 'google-2019' THEN (SELECT count(*) FROM google2019.collections WHERE collection = 'JOB')
        WHEN 'alibaba-2018' THEN (SELECT count(DISTINCT job_name) FROM alibaba2018.batch_task)
    END AS jobs
FROM (VALUES
    ('swf', 'each log''s first submission (UnixStartTime in its header)', NULL::TIMESTAMPTZ, 'the log''s TimeZoneString',
     'processors', 'KB per processor', false, false, NULL),
    ('google-2011', '600 s before the trace''s start', TIMESTAMPTZ '2011-05-01 18:50:00-04:00', 'America/New_York',
     'normalised cores (largest machine = 1)', 'normalised bytes (largest machine = 1)', true, true,
     'per 5-minute window: mean, maximum and one random second of CPU; mean memory'),
    ('google-2019', '600 s before the trace''s start', TIMESTAMPTZ '2019-04-30 23:50:00-07:00', 'each cell''s own',
     'NCU (normalised compute units, the same in all cells)', 'normalised bytes', true, true,
     'per 5-minute window: mean, maximum, one random second and percentiles of CPU; mean memory'),
    ('alibaba-2018', 'the trace''s start (seconds)', NULL::TIMESTAMPTZ, 'not stated by the trace',
     'cores (100 = one core in the files)', 'normalised (0-100)', true, true,
     'per batch instance: mean and maximum CPU and memory over its life')
) AS t(trace, clock, start_at, time_zone, cpu_unit, memory_unit, has_machines, has_tasks, usage)
