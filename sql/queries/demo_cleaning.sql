-- query: what each cleaning rule did to the given logs (parameter: a list of log names)
SELECT log, filter, step, rule, action, jobs FROM swf.clean_report
WHERE list_contains($1, log) AND jobs > 0
ORDER BY log, filter, step
