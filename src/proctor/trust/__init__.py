"""Trust in a judge: what a number rests on (coverage), how much it would move with other topics (bootstrap
intervals), ensembles, calibration on a few human labels, and the review queue."""
