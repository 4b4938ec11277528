-- name: analysis.predictions_jobs
-- grain: one row per job (SWF job id, or Google job_id * 100000 + task_index) and resource of each source the report ran on
-- description: The full method's prediction per job and resource (sliding window over the workflow's completed jobs, maximum predictor, profiles for cold starts, capped at the request): submit, used, requested, window_jobs (k), workflow_jobs (jobs in its workflow), layer (workflow, user profile, global profile or request), predicted, train (in the first 80 % of its user's jobs, where k was chosen; scores use the rest).
SELECT * FROM read_parquet({analysis_predictions_jobs})
