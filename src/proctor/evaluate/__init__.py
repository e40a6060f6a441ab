"""Phase 3: grades → relevance labels → qrels and coverage → leaderboards."""
