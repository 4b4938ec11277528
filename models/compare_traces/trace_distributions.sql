-- query: per trace and cell, its jobs by duration (end - start) and by size (tasks, or an SWF job's processors) in bins of a tenth of a decade (bin = the lower edge's log10; a duration under 1 s counts as 1 s): for ECDFs side by side, a row per non-empty bin, whatever the number of jobs
SELECT trace, cell, 'duration_s' AS measure, floor(log10(greatest(end_s - start_s, 1)) * 10) / 10 AS bin, count(*) AS jobs
FROM cluster.jobs WHERE end_s >= start_s GROUP BY ALL
UNION ALL
SELECT trace, cell, 'size', floor(log10(greatest(coalesce(tasks, processors), 1)) * 10) / 10, count(*)
FROM cluster.jobs WHERE coalesce(tasks, processors) IS NOT NULL GROUP BY ALL
ORDER BY trace, cell, measure, bin
