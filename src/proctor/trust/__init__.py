"""Trust in a judge: ensembles, calibration on a few human labels, and the review queue."""
