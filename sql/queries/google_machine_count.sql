-- query: how many machines the Google lake's machine_events name
SELECT count(DISTINCT machine_id) AS machines FROM google.machine_events
