"""Significance between systems as IR papers report it: paired tests over queries (`ttest`, `randomization`),
a multiple-comparison correction (`correction`), and every pair of systems of a leaderboard (`pairs`)."""
