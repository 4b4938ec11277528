-- query: an SWF log's raw header and its machine size ($1: the log)
SELECT raw_header, machine_size, max_procs FROM swf.logs WHERE log = $1
