-- name: analysis.packing
-- grain: one row per heuristic of the last `lakehouse pack` run on this lake
-- description: Machines needed to pack the services of the last `lakehouse pack` query (by default the long-running jobs of analysis.job_sinusoids) by FFD, BFD, MM and MMM (packing by peak), with the lower bound (sum c + |sum rho e^(i phi)|) / capacity and each count's ratio to it; capacity, tasks, jobs and the query that gave the jobs.
SELECT * FROM read_parquet({analysis_packing})
