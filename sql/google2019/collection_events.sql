-- name: google2019.collection_events
-- grain: one row per collection event (a job or an alloc set) of a cell of Google's 2019 trace
-- description: The collection_events table of every ingested cell, decoded: event by name (the 2019 codes, not 2011's: SCHEDULE is 3, FINISH 6), collection = JOB or ALLOC_SET, tier from the raw priority (free <= 99, best-effort batch 100-115, mid 116-119, production 120-359, monitoring >= 360: docs/google-2019.md says why), missing by name, latency_sensitivity for scheduling_class, alloc_collection_id 0 for a job outside an alloc set, start_after_collection_ids the collections it waits for. Times as in google2019.machine_events.
SELECT * FROM google2019.named_events('stored.google2019_collection_events')
