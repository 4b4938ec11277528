-- name: swf.clean_report
-- grain: one row per log, filter (clean, strong) and rule, in rule order
-- description: What each cleaning rule did to each log: jobs dropped (action = drop; each job counts under the first rule that drops it) or repaired (action = repair; counted among the jobs that reached the rule). jobs_in - sum of drops = jobs kept in swf.jobs_clean / swf.jobs_strong.
WITH rules(filter, step, rule, action) AS (
    VALUES ('clean', 1, 'no_procs', 'drop'),
           ('clean', 2, 'wider_than_machine', 'drop'),
           ('clean', 3, 'bad_run_time', 'drop'),
           ('clean', 4, 'bad_submit_time', 'drop'),
           ('clean', 5, 'req_time_repaired', 'repair'),
           ('strong', 1, 'procs_over_max_procs', 'drop'),
           ('strong', 2, 'req_procs_from_alloc', 'repair'),
           ('strong', 3, 'alloc_procs_from_req', 'repair'),
           ('strong', 4, 'no_procs', 'drop'),
           ('strong', 5, 'run_time_not_positive', 'drop'),
           ('strong', 6, 'req_time_not_positive', 'drop'),
           ('strong', 7, 'run_time_clipped', 'repair'),
           ('strong', 8, 'negative_submit_time', 'drop')
),
-- One row per job and rule that touched it: its drop rule, and each repair flag that was set.
outcomes AS (
    SELECT log, 'clean' AS filter, dropped_by,
           [CASE WHEN req_time_repaired THEN 'req_time_repaired' END] AS repairs
    FROM swf.jobs_clean_steps
    UNION ALL
    SELECT log, 'strong', dropped_by,
           [CASE WHEN req_procs_from_alloc THEN 'req_procs_from_alloc' END,
            CASE WHEN alloc_procs_from_req THEN 'alloc_procs_from_req' END,
            CASE WHEN run_time_clipped THEN 'run_time_clipped' END]
    FROM swf.jobs_strong_steps
),
placed AS (
    SELECT o.log, o.filter, o.dropped_by, o.repairs, coalesce(r.step, 1000) AS dropped_step
    FROM outcomes AS o
    LEFT JOIN rules AS r ON r.filter = o.filter AND r.rule = o.dropped_by
),
totals AS (SELECT log, filter, count(*) AS jobs_in FROM placed GROUP BY ALL),
drops AS (SELECT log, filter, dropped_by AS rule, count(*) AS jobs FROM placed
          WHERE dropped_by IS NOT NULL GROUP BY ALL),
repairs AS (
    SELECT p.log, p.filter, r.rule, count(*) AS jobs
    FROM (SELECT log, filter, dropped_step, unnest(repairs) AS rule FROM placed) AS p
    JOIN rules AS r ON r.filter = p.filter AND r.rule = p.rule
    WHERE p.dropped_step > r.step
    GROUP BY ALL
)
SELECT t.log, r.filter, r.step, r.rule, r.action, t.jobs_in,
       coalesce(CASE r.action WHEN 'drop' THEN d.jobs ELSE p.jobs END, 0) AS jobs
FROM totals AS t
JOIN rules AS r ON r.filter = t.filter
LEFT JOIN drops AS d ON d.log = t.log AND d.filter = r.filter AND d.rule = r.rule
LEFT JOIN repairs AS p ON p.log = t.log AND p.filter = r.filter AND p.rule = r.rule
ORDER BY t.log, r.filter, r.step
