-- query: jobs of the Google lake, those whose 1-second samples were recorded or never were, and those breaking "all or none"
SELECT
    count(*) AS jobs,
    count(*) FILTER (measured) AS measured,
    count(*) FILTER (NOT measured) AS samples_never_recorded,
    count(*) FILTER (NOT consistent) AS inconsistent
FROM google.job_sampling
