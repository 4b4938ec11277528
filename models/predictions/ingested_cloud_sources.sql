-- query: the cloud sources whose usage the lake ingested, from its manifest alone (reading the targets to see which have any scans every usage row: a minute at 0.2 of a 2019 cell): google (2011), each 2019 cell, alibaba-2018
SELECT DISTINCT
    CASE dataset
        WHEN 'google.task_usage' THEN 'google'
        WHEN 'google2019.instance_usage' THEN 'google-2019-' || split_part(name, '.', 1)
        ELSE 'alibaba-2018'
    END AS source
FROM meta.manifest
WHERE dataset IN ('google.task_usage', 'google2019.instance_usage', 'alibaba2018.batch_instance')
ORDER BY source = 'alibaba-2018', source
