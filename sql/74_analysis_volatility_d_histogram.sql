-- name: analysis.volatility_d_histogram
-- grain: one row per bin of d and subset flags, as `lakehouse report volatility` last counted them
-- description: Usage windows of the tasks of mu1s-measured jobs by d_bin = lower edge of d = (mu5m - mu1s) / mu5m in bins of 0.001 (values below -4 counted at -4; d = 1, i.e. mu1s = 0, alone in the 1.0 bin; NULL when mu5m = 0), high_slo and long_running: windows, zero_mu1s = windows with mu1s = 0, and the sums of d and |d| (for exact means). Sum over the flags you do not filter on.
SELECT * FROM read_parquet({analysis_volatility_d_histogram})
