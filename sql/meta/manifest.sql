-- setup: meta.manifest
-- description: The ingest manifest: one row per committed input file (an SWF log, a Google trace part) with its fingerprint, counts and status, so that a re-run skips what is unchanged. Created once; never replaced.
CREATE SCHEMA IF NOT EXISTS meta;
CREATE TABLE IF NOT EXISTS meta.manifest (
    dataset VARCHAR NOT NULL,          -- 'swf', later 'google.task_usage', ...
    name VARCHAR NOT NULL,             -- the output's name inside its dataset (SWF: the log name)
    source VARCHAR NOT NULL,           -- the input file as given
    size BIGINT,                       -- bytes of the input file
    content_hash VARCHAR,              -- SHA-256 of the input file's bytes
    rows_in BIGINT,                    -- data lines read
    rows_out BIGINT,                   -- rows written
    rows_quarantined BIGINT,           -- lines sent to the quarantine
    status VARCHAR NOT NULL,           -- 'ok' or 'failed'
    message VARCHAR,                   -- warnings, or the error of a failed file
    ingested_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (dataset, name)
);
