-- name: analysis.campaign_plans
-- grain: one row per slot of a campaign (campaign, log, machine size, variant, tau), as the newest `lakehouse campaign run` that covered it planned it
-- description: Which run each slot of a campaign stands for now: run_key is the run its newest plan chose (skipped runs are planned too), made of the view, the machine size, the settings and jobs_fingerprint (SHA-256 of the columns the run reads, listed in columns); planned_at is when. A slot's number in analysis.campaign_results is the result of this run, never of an older plan's (another view, an imported prediction table since replaced); `lakehouse campaign show` also recomputes jobs_fingerprint on the lake as it is and says which slots' inputs changed since.
SELECT * FROM stored.analysis_campaign_plans
QUALIFY row_number() OVER (PARTITION BY campaign, log, machine_size, variant, tau ORDER BY planned_at DESC) = 1
