-- name: analysis.campaign_results
-- grain: one row per slot of a campaign (campaign, log, machine size, variant, tau) that has a stored result: what `lakehouse campaign show` prints
-- description: The campaign's current numbers: for each slot the stored row (analysis.campaign_runs) of the run its newest plan chose (analysis.campaign_plans), with the plan's view. A slot planned but not run yet (an interrupted campaign) has no row here. Runs stored before campaigns recorded their plans show their newest row per slot.
SELECT r.* REPLACE (p.view AS view)
FROM analysis.campaign_runs r
JOIN analysis.campaign_plans p ON p.campaign = r.campaign AND p.run_key = r.run_key
UNION ALL BY NAME
SELECT * FROM (
    SELECT r.*
    FROM analysis.campaign_runs r
    ANTI JOIN analysis.campaign_plans p
        ON p.campaign = r.campaign AND p.log = r.log AND p.machine_size = r.machine_size
       AND p.variant = r.variant AND p.tau = r.tau
    QUALIFY row_number() OVER (PARTITION BY campaign, log, machine_size, variant, tau ORDER BY finished_at DESC) = 1
)
