"""The ground floor: what every layer above reads and none of it imports -- the lake (`lake`: its
folders, connections and writer), its catalog and tables (`catalog`, `datasets`, `schemas`), the
formats of what comes in and goes out (`swf_format`, `google_format`, `export`), a log's jobs as the
views give them (`job_views`), budgets, names, outputs, errors, rendering, figures
and stored results.  It loads neither the
models nor the compiled engine (`from lakehouse import Lake` stays cheap)."""
