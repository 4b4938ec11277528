-- name: analysis.job_sinusoids
-- grain: one row per long-running job of the Google lake with at least a day of demand windows
-- description: Periodic fits of each long-running job's CPU demand per task (lakehouse report periodicity): level c, daily amplitude rho = daily_ratio * c and phase phi (radians, time origin the trace start), so a task demands W(t) = c + rho sin(2 pi t / 86400 + phi); amplitude ratios, phases and Wald-test p-values of the hourly, daily and weekly components; trend (change over the series / c) and noise (residual sd / c). The input of packing.
SELECT * FROM read_parquet({analysis_job_sinusoids})
