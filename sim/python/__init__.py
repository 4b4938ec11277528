"""The simulator's Python face (policy names, argument checks, campaign runner)."""
