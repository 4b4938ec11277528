-- query: forget one committed file of an analysis table, so that its view no longer reads it (parameters: dataset key, name)
DELETE FROM meta.outputs WHERE dataset = $1 AND name = $2
