-- setup: cluster macros
-- description: The rules the common cluster.* views share: cluster.name_number(name), the number a trace that names its jobs and tasks (Alibaba 2018's 'j_1234' and 'M2_1') gets in cluster.*'s job_number and task_number, a 63-bit hash of the name (the traces that number their jobs and tasks, SWF and Google, keep their own numbers).
CREATE SCHEMA IF NOT EXISTS cluster;
CREATE OR REPLACE MACRO cluster.name_number(name) AS (hash(name) >> 1)::BIGINT;
