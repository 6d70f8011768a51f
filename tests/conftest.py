"""Fixtures shared by all tests."""

import pytest

from tests.factories import DATA


@pytest.fixture
def data_dir():
    """The project's sample data folder (copied from shared/data)."""
    return DATA
