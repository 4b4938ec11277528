-- query: the cells of Google's 2019 trace with something to predict (an ended task with requests and usage)
SELECT DISTINCT source FROM predict.google2019_targets ORDER BY source
