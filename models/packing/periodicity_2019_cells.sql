-- query: the cells of Google's 2019 trace with fitted periodic jobs (`report periodicity --trace google-2019`)
SELECT DISTINCT cell FROM analysis.periodicity_2019 ORDER BY cell
