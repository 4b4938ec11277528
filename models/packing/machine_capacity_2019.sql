-- query: the most common CPU capacity among the machines of one cell of Google's 2019 trace (NCU; the default of `lakehouse pack --trace google-2019`)
SELECT mode(capacity_cpus) AS capacity FROM google2019.machine_events WHERE cell = $cell AND capacity_cpus > 0
