-- query: an inbox file a nightly run hashed (path, size, mtime_ns, content_hash, seen_at)
INSERT OR REPLACE INTO meta.nightly_files VALUES ($1, $2, $3, $4, $5)
