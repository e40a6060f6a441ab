"""Grade sets: which one a command reads (`resolve`), derived grade sets (`ensemble`),
and their management (`manage`)."""
