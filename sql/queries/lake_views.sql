-- query: the lake's views (schema.name) with their descriptions; `lakehouse views`
SELECT schema_name || '.' || view_name AS view, comment
FROM duckdb_views()
WHERE NOT internal AND database_name = current_database()
ORDER BY view
