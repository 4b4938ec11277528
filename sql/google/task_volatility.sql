-- name: google.task_volatility
-- grain: one row per task of a mu1s-measured job (google.measured_jobs) with usage windows
-- description: How far the 1-second CPU samples (mu1s) stray from the 5-minute means (mu5m) per task, over its windows in google.measured_usage: windows and non-zero samples; coefficient of variation (sample sd / mean) of mu1s and of mu5m, and their robust counterparts MAD / median (the CV explodes for near-zero means); mean_abs_d = mean of |d| over windows with mu5m > 0; mean mu5m and mu1s; the task's scheduling class, CPU request, high_slo and long_running flags (as in google.volatility_windows).
SELECT * FROM google.task_volatility_of('google.measured_usage', 'google.tasks')
