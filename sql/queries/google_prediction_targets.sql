-- query: how many Google jobs have something to predict
SELECT count(*) AS n FROM predict.google_targets
