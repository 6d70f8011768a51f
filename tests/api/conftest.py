"""Fixtures for the REST API: two campaigns (ad hoc TREC, CAR outline), the people, and clients acting as them."""

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from annotation.services.campaigns import create_campaign
from annotation.roles import Role, ensure_groups
from annotation.services.tokens import issue_token
from assessments.models import Topic
from retrieval.models import Collection
from tests import factories
from tests.api.helpers import PARA


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Hashing test users' passwords need not be slow."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def web(db):
    """Collection 'web': ad hoc topics 301-303 and documents d1-d5."""
    return make_web()


def make_web():
    coll = factories.collection("web", kind=Collection.Kind.DOCUMENTS)
    for qid in ("301", "302", "303"):
        factories.topic(coll, qid, kind=Topic.Kind.ADHOC, title=f"Topic {qid}", text=f"What is {qid}?")
    for n in range(1, 6):
        factories.passage(coll, f"d{n}")
    return coll


@pytest.fixture
def adhoc(web):
    """Campaign 'adhoc' over topics 301 and 302 of 'web' (303 is not one of its topics)."""
    return make_adhoc()


def make_adhoc():
    return create_campaign(name="adhoc", task="adhoc", topics=["301", "302"])


@pytest.fixture
def car(db):
    """Collection 'car': outline topics tqa2:L_0001 (two facets) and tqa2:L_0002, paragraphs PARA."""
    coll = factories.collection("car", kind=Collection.Kind.PASSAGES)
    factories.topic(
        coll, "tqa2:L_0001", title="Water",
        facets=[("tqa2:L_0001/T_0001", "Droughts"), ("tqa2:L_0001/T_0002", "Floods")],
    )
    factories.topic(coll, "tqa2:L_0002", title="Fire", facets=[("tqa2:L_0002/T_0001", "Forest fires")])
    for pid in PARA:
        factories.passage(coll, pid, text=f"Paragraph {pid[-2:]}.")
    return coll


@pytest.fixture
def outline(car):
    """Campaign 'car-y3' over topic tqa2:L_0001 only."""
    return create_campaign(name="car-y3", task="outline", topics=["tqa2:L_0001"])


@pytest.fixture
def keys(db):
    """API keys of participant A ('team-a'), participant B ('team-b') and an organiser."""
    return make_keys()


def make_keys():
    factories.user("boss").groups.add(ensure_groups()[Role.ORGANISER])  # a token never makes an organiser
    return {
        "participant_a": issue_token(username="team-a", role="participant")[1],
        "participant_b": issue_token(username="team-b", role="participant")[1],
        "organiser": issue_token(username="boss", role="organiser")[1],
    }


@pytest.fixture
def assessor_user(db):
    return make_assessor_user()


def make_assessor_user():
    user = factories.user("judge")
    user.groups.add(Group.objects.get(name=Role.ASSESSOR))
    return user


@pytest.fixture
def client_as(keys, request):
    """client_as(actor) → an APIClient acting as one of ACTORS (the assessor in a browser session)."""

    def make(actor):
        client = APIClient()
        if actor == "assessor":
            client.force_login(request.getfixturevalue("assessor_user"))
        elif actor != "anonymous":
            client.credentials(HTTP_AUTHORIZATION=f"Token {keys[actor]}")
        return client

    return make


@pytest.fixture
def team_a(client_as):
    return client_as("participant_a")


@pytest.fixture
def organiser(client_as):
    return client_as("organiser")
