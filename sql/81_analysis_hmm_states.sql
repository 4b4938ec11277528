-- name: analysis.hmm_states
-- grain: one row per SWF log, number of states and state of the fitted workload HMM
-- description: Each state of a workload HMM fitted by `lakehouse report hmm`: share = mean posterior probability over the training bins, mean_jobs_per_bin, median_runtime (seconds, lower edge of the median run-time bin of its emission), self_transition a_jj, emissions (probability per run-time bin, in the order of the training's bins) and transitions (its row of the matrix); stays = runs of the state in the Viterbi path, mean_stay in bins, geometric_p = 1 / mean_stay (the geometric law fitted to the stays) against model_p = 1 - a_jj (the law the model implies).
SELECT * FROM read_parquet({analysis_hmm_states})
