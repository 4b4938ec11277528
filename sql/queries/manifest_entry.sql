-- query: the content hash and status an output was last recorded with (parameters: dataset, name)
SELECT content_hash, status FROM meta.manifest WHERE dataset = $1 AND name = $2
