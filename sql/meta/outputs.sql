-- setup: meta.outputs
-- description: The files of the analysis tables that their writers committed (a report's table, a flush of a campaign's finished runs): one row per file, so that the analysis.* views read exactly these and no file someone else put in their folders. Created once; never replaced.
CREATE SCHEMA IF NOT EXISTS meta;
CREATE TABLE IF NOT EXISTS meta.outputs (
    dataset VARCHAR NOT NULL,          -- the dataset's key: 'analysis_locality', 'analysis_campaign_runs', ...
    name VARCHAR NOT NULL,             -- the file's name in the dataset's folder, without .parquet
    source VARCHAR NOT NULL,           -- what wrote it: a report, a campaign
    rows BIGINT NOT NULL,
    written_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (dataset, name)
);
