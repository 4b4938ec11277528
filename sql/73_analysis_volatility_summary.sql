-- name: analysis.volatility_summary
-- grain: one row per trace-wide volatility metric
-- description: The numbers of `lakehouse report volatility`, one column per subset of tasks of mu1s-measured jobs (all; high_slo = scheduling class 2-3; long_running): tasks with all-zero and with exactly 1-4 non-zero samples, median samples per task, median coefficients of variation (plain and MAD/median) of mu1s and mu5m, median per-task mean |d|, windows, share of windows with mu1s = 0, mean d, mean |d| and quantiles of d = (mu5m - mu1s) / mu5m over all windows with mu5m > 0.
SELECT * FROM read_parquet({analysis_volatility_summary})
