-- setup: cluster macros
-- description: The rules the common cluster.* views share: cluster.job_number(name), the number a trace that names its jobs (Alibaba 2018's 'j_1234') gets in cluster.*'s job_number, a 63-bit hash of the name (the traces that number their jobs, SWF and Google, keep their own numbers).
CREATE SCHEMA IF NOT EXISTS cluster;
CREATE OR REPLACE MACRO cluster.job_number(name) AS (hash(name) >> 1)::BIGINT;
