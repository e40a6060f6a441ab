"""How far a number can be trusted: what it rests on (coverage) and how much it would move with other topics
(bootstrap intervals)."""
