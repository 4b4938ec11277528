-- query: the cores of a trace's machines ($1: the trace, $2: its cell or NULL, $3: cores per unit of the trace's CPU): each machine's largest CPU capacity times $3 (a machine of unknown capacity counts as one unit), summed and rounded
SELECT count(*) AS machines, round(sum(coalesce(cpus, 1) * $3))::BIGINT AS cores
FROM (
    SELECT cell, machine_id, max(cpus) AS cpus
    FROM cluster.machines
    WHERE trace = $1 AND ($2 IS NULL OR cell = $2)
    GROUP BY ALL
)
