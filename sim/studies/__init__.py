"""The published scheduling studies made from campaigns of replays: heuristic triples with learned
predictions (`triples`), online policy selection (`selection`) and EASY with run-time distributions
from the workload HMM (`hmm_backfilling`)."""
