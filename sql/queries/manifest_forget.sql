-- query: remove an output's manifest row before it is recorded again (parameters: dataset, name)
DELETE FROM meta.manifest WHERE dataset = $1 AND name = $2
