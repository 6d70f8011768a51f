"""Corpora (collections, books, sentences, passages) and the retrieval work done on them (indexes, jobs, shards, worker nodes)."""

from retrieval.models.corpus import Book, Collection, CollectionQuerySet, Passage, PassageQuerySet, Sentence
from retrieval.models.jobs import Index, Job, Shard, WorkerNode

__all__ = ["Book", "Collection", "CollectionQuerySet", "Index", "Job", "Passage", "PassageQuerySet", "Sentence", "Shard", "WorkerNode"]
