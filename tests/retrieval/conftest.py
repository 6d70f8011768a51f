"""Retrieval test fixtures (defined in tests/retrieval/fixtures.py so other test packages can import them)."""

from tests.retrieval.fixtures import eager_celery, index_dir, minilm, tiny_cross_encoders, tiny_encoder  # noqa: F401
