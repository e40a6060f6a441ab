"""Porter stemming (NLTK's implementation, which needs no downloaded data), cached per word."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Porter stem of one lower-case word."""
    return _stemmer().stem(word)
