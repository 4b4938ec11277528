-- query: the SWF logs with something to predict (a job with a request and a usage of a resource)
SELECT DISTINCT source FROM predict.swf_targets ORDER BY source
