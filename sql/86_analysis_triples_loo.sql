-- name: analysis.triples_loo
-- grain: one row per triple campaign and held-out log, as `lakehouse report triples` last computed it
-- description: Leave-one-out selection of a triple: for each log held out, the triple (clairvoyant ones excluded) with the least sum of mean bounded slowdowns on the other logs of the campaign, its mean bounded slowdown on the held-out log (selected_bsld), EASY's and EASY++'s there, and the reductions against them in percent.
SELECT * FROM read_parquet({analysis_triples_loo})
