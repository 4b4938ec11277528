-- name: analysis.predictions_scores
-- grain: one row per source (SWF log or 'google'), scenario and resource (plus 'overall'), as `lakehouse report predictions` last scored it
-- description: How well each prediction scenario would have replaced the users' requests, on the last 20 % of each user's jobs: jobs, loss = sum of w |predicted - used| walltime in resource units x hours (w = 1 under, 0.5 over by default), loss_vs_requests (relative to the users' requests), accuracy = mean of min(p, u) / max(p, u), under_share = share of jobs under-estimated, freed_share = share of reserved resource-time freed against the requests. 'overall' rows average the resources.
SELECT * FROM read_parquet({analysis_predictions_scores})
