"""The assessor pages' fixtures (a CAR-like article, its assessor and assignment, a saver), shared here."""

from tests.annotation.conftest import article, assessor, assignment, save  # noqa: F401
