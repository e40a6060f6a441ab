"""Bank item ids as the original workbench computes them: `query_id[/facet_id]/md5(text)`."""

from __future__ import annotations

import hashlib


def item_id(query_id: str, text: str, facet_id: str | None = None) -> str:
    """`query/md5(text)` or `query/facet/md5(text)`."""
    digest = hashlib.md5(text.encode("utf-8")).hexdigest()
    return f"{query_id}/{facet_id}/{digest}" if facet_id else f"{query_id}/{digest}"
