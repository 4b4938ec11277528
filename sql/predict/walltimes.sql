-- name: predict.walltimes
-- grain: one row per SWF log (source) and job with a stored walltime prediction
-- description: The walltime `lakehouse report predictions LOG` last predicted for each job of a log (analysis.predictions_jobs, resource 'walltime'): source, job_id, predicted_walltime (s). What a replay with `--predictor column:predicted_walltime` reads beside the log's jobs.
SELECT source, job AS job_id, any_value(predicted) AS predicted_walltime
FROM analysis.predictions_jobs
WHERE resource = 'walltime'
GROUP BY ALL
