-- name: analysis.reproductions
-- grain: one row per published number of a study, as `lakehouse reproduce STUDY` last computed it
-- description: The published studies beside our runs: the paper's table (source), the trace as the paper names it, the lake's log it was compared on (NULL when the lake lacks it), the quantity and the setting the paper states, the published value, ours, ours minus published (difference), that difference in percent of the published value (relative_pct), the unit, and a status that says why a row has no value of ours.
SELECT * FROM read_parquet({analysis_reproductions})
