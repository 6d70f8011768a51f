"""The fixtures of the machine-assistance API tests (test_machine_api, test_machine_zero_shot_api): the campaign of
tests.assessments.machine_setup with its pool (world), beside it another campaign and boss, an organiser (others,
autouse), and boss's client with an organiser token. Import them into a test module (`# noqa: F401`)."""

import pytest
from rest_framework.test import APIClient

from annotation.models import Campaign
from annotation.roles import Role, ensure_groups
from annotation.services.tokens import issue_token
from tests import factories
from tests.assessments.machine_setup import campaign, model_dir, world  # noqa: F401 — four topics, two runs, two assessors

BASE = "/api/campaigns/aero-judging/machine/"


def client(key):
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return c


@pytest.fixture(autouse=True)
def others(world):  # noqa: F811
    """Beside the campaign: another one, 'other' (returned), and boss, an organiser with no token yet."""
    other = factories.campaign("other", Campaign.Task.ADHOC)
    factories.user("boss").groups.add(ensure_groups()[Role.ORGANISER])
    return other


@pytest.fixture
def boss(others):
    return client(issue_token(username="boss", role="organiser")[1])
