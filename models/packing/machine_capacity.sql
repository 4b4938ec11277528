-- query: the most common CPU capacity among the machines of the Google trace (the default of `lakehouse pack`)
SELECT mode(cpus) AS capacity FROM google.machine_events WHERE cpus > 0
