-- setup: meta.nightly_runs, meta.nightly_files, meta.nightly_owed
-- description: The nightly runs' history (one row per `lakehouse nightly`, written when it starts and again when it ends; a run found still 'running' by the next one was killed and is marked failed) and the inbox files they saw, by path, size and modification time, so that a later run hashes only files whose size or time changed; and the reports owed for what a run ingests, recorded before its ingest and settled as each report ends, so that a run stopped midway leaves them to the next. Created once; never replaced.
CREATE SCHEMA IF NOT EXISTS meta;
CREATE TABLE IF NOT EXISTS meta.nightly_runs (
    run VARCHAR PRIMARY KEY,           -- the run's name and its report folder: YYYY-MM-DD, then -2, -3 the same day
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,           -- NULL while running
    status VARCHAR NOT NULL,           -- 'running', 'ok', 'partial' (some files or reports failed), 'failed'
    inbox VARCHAR NOT NULL,
    pid INTEGER,
    files_seen INTEGER,
    files_ingested INTEGER,            -- new or changed files ingested
    files_skipped INTEGER,             -- unchanged files
    files_failed INTEGER,
    reports_run VARCHAR[],             -- the reports that ran, in order
    reports_failed VARCHAR[],
    reports_skipped VARCHAR[],         -- the reports that ran but had too little data to work on
    seconds MAP(VARCHAR, DOUBLE),      -- duration of each step ('ingest', each report, 'html', 'total')
    errors VARCHAR[],                  -- one line per failed file or report
    report VARCHAR                     -- the run's HTML report
);
-- (A lake made before reports_skipped was recorded gains the column, empty for its old runs.)
ALTER TABLE meta.nightly_runs ADD COLUMN IF NOT EXISTS reports_skipped VARCHAR[];
CREATE TABLE IF NOT EXISTS meta.nightly_files (
    path VARCHAR PRIMARY KEY,          -- an inbox file, absolute
    size BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    content_hash VARCHAR NOT NULL,     -- SHA-256, as in meta.manifest
    seen_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS meta.nightly_owed (
    report VARCHAR NOT NULL,           -- a report of the nightly config
    dataset VARCHAR NOT NULL,          -- the version of an input it is owed for, as meta.manifest names it
    name VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    owed_since VARCHAR NOT NULL,       -- the run that planned to ingest it
    PRIMARY KEY (report, dataset, name)
);
