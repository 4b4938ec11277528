-- name: analysis.volatility_rate_histogram
-- grain: one row per non-empty cell of the joint histogram of mu5m/request vs mu1s/request and subset flags
-- description: Usage windows of the tasks of mu1s-measured jobs by has_request (the task has a positive CPU request), mu5m_bin and mu1s_bin (lower edges, log10, of the two rates as ratios to the request, in quarter decades clamped to [-5, 1]; NULL for a rate of 0 or no request), high_slo and long_running. The joint distribution of `lakehouse report volatility`: the rows with has_request.
SELECT * FROM read_parquet({analysis_volatility_rate_histogram})
