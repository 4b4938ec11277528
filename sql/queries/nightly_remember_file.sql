-- query: an inbox file a nightly run hashed (path, size, mtime_ns, content_hash, seen_at); a MERGE, not INSERT OR REPLACE: a DuckLake lake's tables have no primary key
MERGE INTO meta.nightly_files AS f
USING (SELECT $1 AS path, $2 AS size, $3 AS mtime_ns, $4 AS content_hash, $5 AS seen_at) AS n
ON f.path = n.path
WHEN MATCHED THEN UPDATE SET size = n.size, mtime_ns = n.mtime_ns, content_hash = n.content_hash, seen_at = n.seen_at
WHEN NOT MATCHED THEN INSERT VALUES (n.path, n.size, n.mtime_ns, n.content_hash, n.seen_at)
