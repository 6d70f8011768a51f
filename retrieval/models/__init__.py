"""Corpora (collections, books, sentences, passages) and the retrieval work done on them (indexes, jobs, shards, worker nodes)."""

from retrieval.models.corpus import Book, Collection, CollectionQuerySet, Passage, PassageQuerySet, Sentence
from retrieval.models.background import ACTIVE, ENDED, BackgroundJob, BackgroundJobQuerySet, JobStatus
from retrieval.models.jobs import Index, Job, Shard, WorkerNode

__all__ = ["ACTIVE", "ENDED", "BackgroundJob", "BackgroundJobQuerySet", "Book", "Collection", "CollectionQuerySet", "Index", "Job", "JobStatus", "Passage", "PassageQuerySet", "Sentence", "Shard", "WorkerNode"]
