"""Proctor: evaluate search, generation and RAG systems with LLM-graded exam questions."""

__version__ = "0.1.0"
