-- name: analysis.selection_curves
-- grain: one row per selection campaign, log, strategy and week
-- description: The policy-selection study over time: for the jobs submitted up to the end of each week of a resample, the ratio of a strategy's average wait to EASY-FCFS's on the same resample, averaged over the resamples (mean_ratio) with its 10th and 90th percentiles.
SELECT * FROM read_parquet({analysis_selection_curves})
