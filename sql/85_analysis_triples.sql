-- name: analysis.triples
-- grain: one row per triple campaign and log, as `lakehouse report triples` last computed it
-- description: The heuristic-triple study (docs/predictions.md) per log: mean bounded slowdown of EASY with clairvoyant predictions (queue-order and SJBF backfilling), of EASY (requested times, queue order), of EASY++ (AVE2 predictions, incremental correction, SJBF), and of the best and worst learned (E-Loss) triple for each backfilling order, with the triple's name (prediction + correction + backfilling).
SELECT * FROM read_parquet({analysis_triples})
