-- name: google.quarantine
-- grain: one row per rejected line of a Google trace part
-- description: Lines that were not ingested, with the table, the part, the source file, the line number, the raw text and DuckDB's reason (wrong column count, a value that does not parse as its schema type). Lines of a part = its rows + its rows here.
SELECT * FROM stored.google_quarantine
