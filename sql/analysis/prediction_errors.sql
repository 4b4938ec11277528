-- name: analysis.prediction_errors
-- grain: one row per stored campaign run (campaign, log, machine size and settings), its newest result
-- description: How each run's initial predictions (the prediction a job had when it was first considered, before any correction) compare with what the jobs ran: prediction_mae = mean |prediction - run| in seconds, prediction_mean_eloss = mean E-Loss (over-predictions squared, under-predictions linear, job weight 1 + ln(processors x run); docs/predictions.md), prediction_under_share = share of jobs predicted shorter than they ran; with the run's mean bounded slowdown. Empty for runs stored before these columns existed (schema_version 1).
SELECT campaign, log, machine_size, compat, algorithm, policy, predictor, correction, backfill, jobs,
       prediction_mae, prediction_mean_eloss, prediction_under_share, mean_bounded_slowdown
FROM analysis.campaign_runs
WHERE status = 'ok' AND prediction_mae IS NOT NULL
