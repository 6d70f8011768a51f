"""Judging nuggets is blind (issue 29): no run name reaches an assessor's or a reviewer's browser (the judging
pages, their data, a save's and a mark's answers, the queue, the review queue and review page) unless the campaign
shows run names (Campaign.show_run_names)."""

import json
import uuid

import pytest

from annotation.models import Campaign, Review
from assessments.services import nuggets
from tests.annotation.nuggets_setup import RUNS, reviewed_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return reviewed_world("blind-judge", "blind-reviewer")


def received(client, world) -> list[str]:
    """Everything the assessor's and then the reviewer's browser got while the assessor labels and finishes one
    answer and the reviewer opens its review."""
    unit = world["units"][RUNS[0]]
    client.force_login(world["judge"])
    got = [client.get(f"/a/{unit.token}/").content.decode()]
    for seq, nugget in enumerate(world["bank"], start=1):
        body = {"change_id": str(uuid.uuid4()), "client_time": f"2026-01-05T10:00:{seq:02d}Z", "client_seq": seq,
                "session_id": "tab", "layer": "nugget_support", "nugget": nugget["id"], "value": nuggets.SUPPORT}
        got.append(client.post(f"/a/{unit.token}/save", json.dumps(body), content_type="application/json")
                   .content.decode())
    got.append(client.post(f"/a/{unit.token}/mark", json.dumps({"done": True}), content_type="application/json")
               .content.decode())
    got.append(client.get("/").content.decode())
    got.append(client.get(f"/a/{unit.token}/").content.decode())
    review = Review.objects.get(assignment=unit)
    client.force_login(world["reviewer"])
    got.append(client.get("/review/").content.decode())
    got.append(client.get(f"/review/{review.pk}/").content.decode())
    return got


def test_no_run_name_reaches_the_assessor_or_the_reviewer(client, world):
    texts = received(client, world)
    assert "Review of blind-judge" in texts[-1]  # the review page itself was served
    for text in texts:
        for run in RUNS:
            assert run not in text


def test_a_campaign_that_shows_run_names_shows_them_to_the_reviewer(client, world):
    Campaign.objects.filter(pk=world["campaign"].pk).update(show_run_names=True)
    texts = received(client, world)
    assert RUNS[0] in texts[-2] and RUNS[0] in texts[-1]  # the review queue and the review page
