-- name: analysis.periodicity_2019
-- grain: one row per cell of Google's 2019 trace and job running through it
-- description: Written by `lakehouse report periodicity --trace google-2019`: per cell and long-running job (job_id = its collection_id), the fits of analysis.job_sinusoids (level c, daily amplitude rho and phase phi, each component's ratio, phase and p-value) on the clock of the cell's own time zone (t = seconds since local midnight of the trace's first day there), and daily_peak_local_h, the local hour the daily component peaks at.
SELECT * FROM read_parquet({analysis_periodicity_2019})
