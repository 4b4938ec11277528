-- query: the cloud traces' sources with something to predict (an ended task with requests and usage): google (2011), each 2019 cell, alibaba-2018
SELECT DISTINCT source, trace = 'alibaba-2018' AS later FROM predict.cluster_targets ORDER BY later, source
