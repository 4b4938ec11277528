-- name: google.tasks_long_running
-- grain: one row per task of google.tasks present for the whole trace
-- description: Tasks that were already there before the trace window (an event at time 0) and never ended (no FINISH, FAIL, KILL or LOST event): services running through the whole trace. On a partial set of task_events parts "never ended" means "not within the ingested parts".
SELECT * FROM google.tasks WHERE long_running
