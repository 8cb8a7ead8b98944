"""Metrics of the ground truth (docs/design.md §9.3): model scores, the arbiter's decisions and false-accept rate,
issue precision, reviewer throughput and agreement; `arbiter metrics` and the review app's Metrics page."""
