"""Phase 2: grade every passage of the judgment pool for every question of its query."""
