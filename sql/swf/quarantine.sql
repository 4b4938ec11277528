-- name: swf.quarantine
-- grain: one row per rejected line of an SWF log
-- description: Lines that were not ingested as jobs, with the source file, the line number, the raw text and the reason (wrong field count, a non-numeric field, a duplicate job id). Lines in = rows of swf.jobs + rows here.
SELECT * FROM stored.swf_quarantine
