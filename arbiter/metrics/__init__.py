"""Metrics of the ground truth (DESIGN §9): model scores, the arbiter's decisions and false-accept rate,
issue precision, reviewer throughput and agreement; `arbiter metrics` and the review app's Metrics page."""
