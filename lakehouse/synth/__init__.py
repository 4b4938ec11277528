"""Synthetic data in the published formats, with the ground truth planted in it written beside it."""
