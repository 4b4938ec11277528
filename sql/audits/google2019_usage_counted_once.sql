-- audit: google2019.usage_counted_once
-- description: No window of a task inside an alloc set is in google2019.usage (its alloc instance's window already holds its usage: summed twice, a cell's CPU would be overstated); a row here is such a window.
SELECT cell, collection_id, instance_index, start_time FROM google2019.usage AS u
WHERE EXISTS (SELECT 1 FROM google2019.instance_usage AS i
              WHERE i.cell = u.cell AND i.shard = u.shard AND i.line = u.line AND NOT i.top_level)
