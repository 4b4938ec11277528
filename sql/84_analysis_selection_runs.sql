-- name: analysis.selection_runs
-- grain: one row per selection campaign, log and strategy, as `lakehouse report selection` last computed it
-- description: The online policy-selection study (docs/selection.md) per log: for every fixed queue policy of EASY and every selector (full, noisy, egreedy at a period of a week or a day), the ratio of its average wait to EASY-FCFS's on the same week resample, averaged over the resamples (mean_ratio) with its 10th and 90th percentiles, and the mean of its average waits in seconds.
SELECT * FROM read_parquet({analysis_selection_runs})
