-- query: the summary of the given logs (parameter: a list of log names)
SELECT * FROM swf.log_summary WHERE list_contains($1, log)
