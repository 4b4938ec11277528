-- audit: swf.cleaned_jobs_replayable
-- description: Every job of swf.jobs_clean and swf.jobs_strong can be replayed on the machine its view was filtered with: a submit time, a run time of at least 0 and from 1 processor to the machine's size. A row here is a job the simulator would refuse.
SELECT 'jobs_clean' AS view, j.log, j.job_id, j.submit_time, j.run_time, j.procs, l.clean_machine_size AS machine
FROM swf.jobs_clean AS j JOIN swf.logs AS l USING (log)
WHERE j.submit_time IS NULL OR j.run_time IS NULL OR j.run_time < 0 OR j.procs IS NULL OR j.procs < 1
    OR j.procs > l.clean_machine_size
UNION ALL
SELECT 'jobs_strong', j.log, j.job_id, j.submit_time, j.run_time, j.procs, l.strong_machine_size
FROM swf.jobs_strong AS j JOIN swf.logs AS l USING (log)
WHERE j.submit_time IS NULL OR j.run_time IS NULL OR j.run_time < 0 OR j.procs IS NULL OR j.procs < 1
    OR j.procs > l.strong_machine_size
