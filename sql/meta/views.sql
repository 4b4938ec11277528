-- setup: meta.views
-- description: The statements each view of the catalog was last made with, so that a writer re-creates only the views whose statements changed (another version of the package, files added or replaced, a lake moved) or that are gone or were redefined since (a CREATE OR REPLACE VIEW drops the comment the statements set). Created once; never replaced.
CREATE SCHEMA IF NOT EXISTS meta;
CREATE TABLE IF NOT EXISTS meta.views (
    name VARCHAR PRIMARY KEY,          -- schema.view
    ddl VARCHAR NOT NULL,              -- the CREATE OR REPLACE VIEW and COMMENT ON VIEW statements run
    made_comment VARCHAR               -- duckdb_views().comment right after
);
