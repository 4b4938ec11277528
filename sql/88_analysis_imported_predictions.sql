-- name: analysis.imported_predictions
-- grain: one row per prediction table (name) and job (log, job_id), as `lakehouse import predictions FILE --name NAME` last stored it
-- description: Run-time predictions made outside lakehouse, read by `--predictor table:NAME`: predicted is the predicted run time in seconds (rounded to the nearest whole second for a replay, halves up; a job without one uses its requested time). source_file is the file imported, content_hash the SHA-256 of the rows stored (log, job_id, predicted), which changes whenever the table does.
SELECT * FROM read_parquet({analysis_imported_predictions}, union_by_name = true)
