-- query: every SWF log at a glance; `lakehouse logs`
SELECT * FROM swf.log_summary
