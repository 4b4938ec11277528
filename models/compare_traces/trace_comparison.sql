-- query: one row per trace and cell in the lake (an SWF log; a Google 2019 cell; else NULL): its jobs, tasks, users, machines and span in days, the job size (tasks, or an SWF job's processors) and duration (end - start, hours) at the median and the 90th percentile, the median wait (start - submit, seconds), the CPU utilisation (the CPU-seconds cluster.usage measures over each machine's largest capacity times the measured span), and where the reports ran: the volatility (mean |d| of the 2011 method) and the daily amplitude over the mean (median over long-running jobs)
WITH jobs AS (
    SELECT trace, cell, count(*) AS jobs, count(DISTINCT "user") AS users,
           (max(end_s) - min(coalesce(submit_s, start_s))) / 86400 AS days,
           median(coalesce(tasks, processors)) AS median_job_size,
           quantile_cont(coalesce(tasks, processors), 0.9) AS p90_job_size,
           median(end_s - start_s) / 3600 AS median_duration_h,
           quantile_cont(end_s - start_s, 0.9) / 3600 AS p90_duration_h,
           median(start_s - submit_s) AS median_wait_s
    FROM cluster.jobs
    GROUP BY ALL
),
tasks AS (
    SELECT trace, cell, count(*) AS tasks FROM cluster.tasks GROUP BY ALL
),
machines AS (
    SELECT trace, cell, count(*) AS machines, sum(cpus) AS capacity
    FROM (SELECT trace, cell, machine_id, max(cpus) AS cpus FROM cluster.machines GROUP BY ALL)
    GROUP BY ALL
),
usage AS (
    SELECT trace, cell, sum(cpu_mean * (end_s - start_s)) AS cpu_seconds, max(end_s) - min(start_s) AS seconds
    FROM cluster.usage
    WHERE counted_once AND end_s > start_s AND cpu_mean >= 0
    GROUP BY ALL
),
volatility AS (
    SELECT 'google-2011' AS trace, NULL::VARCHAR AS cell, "all" AS mean_abs_d
    FROM analysis.volatility_summary WHERE metric = 'mean_abs_d'
    UNION ALL
    SELECT 'google-2019', cell, mean_abs_d_2011 FROM analysis.volatility_2019 WHERE tier = 'all'
),
cycles AS (
    SELECT 'google-2011' AS trace, NULL::VARCHAR AS cell, median(daily_ratio) AS daily_ratio
    FROM analysis.job_sinusoids HAVING count(*) > 0
    UNION ALL
    SELECT 'google-2019', cell, median(daily_ratio) FROM analysis.periodicity_2019 GROUP BY cell
)
SELECT j.trace, j.cell, j.jobs, t.tasks, j.users, m.machines, j.days,
       j.median_job_size, j.p90_job_size, j.median_duration_h, j.p90_duration_h, j.median_wait_s,
       u.cpu_seconds / nullif(m.capacity * u.seconds, 0) AS cpu_utilisation,
       v.mean_abs_d AS volatility_mean_abs_d, c.daily_ratio AS daily_amplitude_median
FROM jobs AS j
LEFT JOIN tasks AS t ON t.trace = j.trace AND t.cell IS NOT DISTINCT FROM j.cell
LEFT JOIN machines AS m ON m.trace = j.trace AND m.cell IS NOT DISTINCT FROM j.cell
LEFT JOIN usage AS u ON u.trace = j.trace AND u.cell IS NOT DISTINCT FROM j.cell
LEFT JOIN volatility AS v ON v.trace = j.trace AND v.cell IS NOT DISTINCT FROM j.cell
LEFT JOIN cycles AS c ON c.trace = j.trace AND c.cell IS NOT DISTINCT FROM j.cell
ORDER BY j.trace, j.cell
