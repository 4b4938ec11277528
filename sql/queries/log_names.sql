-- query: the SWF logs of the lake, by name
SELECT log FROM swf.logs ORDER BY log
