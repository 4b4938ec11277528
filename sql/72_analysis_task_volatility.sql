-- name: analysis.task_volatility
-- grain: one row per task of a mu1s-measured job, as google.task_volatility when `lakehouse report volatility` last ran
-- description: The per-task volatility table stored by the report (coefficients of variation of mu1s and mu5m, their MAD/median counterparts, mean |d|, mean rates, class, request, high_slo, long_running), so later queries need not rescan the usage windows.
SELECT * FROM read_parquet({analysis_task_volatility})
