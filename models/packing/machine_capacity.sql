-- query: the most common CPU capacity among the machines of trace $trace (and cell $cell, NULL for a trace without cells), in the trace's CPU unit: the default of `lakehouse pack`
SELECT mode(cpus) AS capacity
FROM cluster.machines
WHERE trace = $trace AND cell IS NOT DISTINCT FROM $cell::VARCHAR AND cpus > 0
