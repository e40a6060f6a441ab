"""Readers and writers: TREC topics, runs and qrels, passage corpora, question banks, exam_pp files."""
