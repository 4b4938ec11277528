-- name: google.job_events
-- grain: one row per job event of the Google trace (clusterdata-2011-2)
-- description: The job_events table typed by the official schema. time is in microseconds of the trace clock, with its special values kept: 0 = before the trace window, 2^63-1 = after it; time_s is seconds and time_at the instant (the trace clock's 600 s is 19:00 EDT on Sunday 1 May 2011; both NULL for the special values) and before_trace/after_trace flag them. event = the event type's name (SUBMIT, SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST, UPDATE_PENDING, UPDATE_RUNNING); missing_info is kept as given (NULL = nothing missing) with its name in missing. part = the source part.
SELECT * FROM google.named_events('stored.google_job_events')
