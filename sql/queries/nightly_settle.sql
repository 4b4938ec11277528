-- query: a report has run over everything it was owed for (parameter: the report)
DELETE FROM meta.nightly_owed WHERE report = $1
