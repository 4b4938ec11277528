"""The nightly re-analysis: an inbox of new traces, an incremental ingest, the standard reports for
what changed, a dated HTML report and the run's history in the lake (`lakehouse nightly`)."""
