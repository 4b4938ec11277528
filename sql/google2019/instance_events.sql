-- name: google2019.instance_events
-- grain: one row per instance event (a task or an alloc instance) of a cell of Google's 2019 trace
-- description: The instance_events table of every ingested cell, decoded as google2019.collection_events (event, collection, tier, missing, latency_sensitivity by name); machine_id 0 = not on a machine, -1 = a dedicated machine; alloc_collection_id 0 = a task outside an alloc set; resource_request_cpus and resource_request_memory NULL when the event carries no request. Its constraints are in google2019.instance_constraints.
SELECT * FROM google2019.named_events('stored.google2019_instance_events')
