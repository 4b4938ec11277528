-- name: google2019.quarantine
-- grain: one row per rejected row of a shard of Google's 2019 trace
-- description: Rows that were not ingested, with the table, the shard (cell.number), the source file, the line (JSON) or row (Parquet, from 1), the raw row and the reason (an unknown code, a negative time, a histogram of the wrong length or out of order, a field of another table, a value of the wrong type). Rows of a shard = its rows in the table + its rows here.
SELECT * FROM stored.google2019_quarantine
