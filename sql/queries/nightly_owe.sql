-- query: a report owed for one version of an input, recorded before the run ingests it (parameters: report, dataset, name, content hash, run)
INSERT OR REPLACE INTO meta.nightly_owed VALUES ($1, $2, $3, $4, $5)
