-- name: analysis.hmm_fits
-- grain: one row per SWF log and number of states, as `lakehouse report hmm` last fitted them
-- description: The workload HMM (states over submit bins of t_s seconds emitting job counts per run-time bin of ratio t_r) fitted by Baum-Welch on the first half of the log's jobs (train_jobs) and tested on the rest (valid_jobs; valid_removed = validation jobs in run-time bins never seen in training). gain_bits_per_job = held-out log-likelihood gain over the single-state model in bits per validation job; train_bits_per_job = training log-likelihood per job (bits, negative); rounds, converged and seconds_per_round of Baum-Welch; init = static or kmeans; poisson = with the Poisson load term.
SELECT * FROM read_parquet({analysis_hmm_fits})
