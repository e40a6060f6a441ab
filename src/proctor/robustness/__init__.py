"""Robustness probes: attacked copies of non-relevant passages graded with a grade set's exact configuration
(`probe`), the attacks (`attacks`), and the safeguards that detect or resist them (`guards`)."""
