-- name: google2019.instance_constraints
-- grain: one row per placement constraint of an instance event of Google's 2019 trace
-- description: The repeated constraint field of instance_events as a table: the event's time, collection_id and instance_index (with cell, shard and line, they find the event), the attribute name (obfuscated), the value and the relation (EQUAL, LESS_THAN, PRESENT, ...).
SELECT *, google2019.relation_name(relation) AS relation_name
FROM stored.google2019_instance_constraints
