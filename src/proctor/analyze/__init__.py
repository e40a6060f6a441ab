"""Meta-evaluation: rank correlation with official leaderboards, agreement with human judges, reports."""
