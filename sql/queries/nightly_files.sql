-- query: the inbox files earlier nightly runs hashed, with the size and modification time they had
SELECT path, size, mtime_ns, content_hash FROM meta.nightly_files
