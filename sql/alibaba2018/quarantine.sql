-- name: alibaba2018.quarantine
-- grain: one row per rejected line of a file of Alibaba's 2018 trace
-- description: Lines that were not ingested, with the table, the part (the file's name without .csv[.gz]), the source file, the line number (from 1), the raw line and the reason (too many or too few fields, a field not of its type, a value outside its documented range). Lines of a file = its rows in the table + its lines here.
SELECT * FROM stored.alibaba2018_quarantine
