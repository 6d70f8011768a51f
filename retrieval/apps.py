from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    """Corpora, passages, book chunking and (in workers) retrieval models."""

    name = "retrieval"
    verbose_name = "Corpora and retrieval"
