"""A small world with every role and one object of each kind, so that URL patterns with parameters resolve.

People: `assessor` owns the outline assignment, `other_assessor` has one of their own (their token must
give `assessor` a 404), `reviewer`, `organiser` (staff, the organiser group), `participant` (a team with
runs), `superuser`. Engineers adding pages add the objects their URLs need to `world` (a plain dict).
"""

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from annotation.services.campaigns import create_campaign, create_pool
from annotation.models import DataImport
from annotation.services.review import open_review
from annotation.roles import Role
from annotation.services.submissions import upload_run
from assessments.models import MachineJob, MachineLabelSource, Topic
from retrieval.models import Collection
from tests import factories

ROLES = ("anonymous", "assessor", "other_assessor", "reviewer", "organiser", "participant", "superuser")
GROUP_OF = {
    "assessor": Role.ASSESSOR, "other_assessor": Role.ASSESSOR, "reviewer": Role.REVIEWER,
    "organiser": Role.ORGANISER, "participant": Role.PARTICIPANT,
}


@pytest.fixture
def people(db):
    """One user per role (anonymous has none)."""
    return make_people()


@pytest.fixture
def world(people):
    """The objects URLs name: assignments (outline), an ad hoc campaign taking runs, a participant's run, a pool."""
    return make_world(people)


def make_people():
    users = {}
    for role in ROLES[1:]:
        user = factories.user(role, is_staff=role in ("organiser", "superuser"), is_superuser=role == "superuser")
        if role in GROUP_OF:
            user.groups.add(Group.objects.get(name=GROUP_OF[role]))
        users[role] = user
    return users


def make_world(people):
    car = factories.collection("car", kind=Collection.Kind.PASSAGES)
    topic = factories.topic(car, "tqa2:L_0001", title="Water", facets=[("tqa2:L_0001/T_0001", "Droughts")])
    passages = [factories.passage(car, f"{i:040x}", text=f"Paragraph {i}.") for i in range(1, 5)]
    car_run = factories.run(car, "guir", {topic: passages})
    outline, (mine, theirs) = factories.assigned_campaign(
        topic, (people["assessor"], people["other_assessor"]), run=car_run, name="car-y3")
    review = open_review(mine)  # a sample of the assessor's batch, given to `reviewer`

    web = factories.collection("web", kind=Collection.Kind.DOCUMENTS)
    for qid in ("301", "302"):
        factories.topic(web, qid, kind=Topic.Kind.ADHOC, title=f"Topic {qid}", text=f"What is {qid}?")
    for n in range(1, 4):
        factories.passage(web, f"d{n}")
    adhoc = create_campaign(name="adhoc", task="adhoc", topics=["301", "302"])
    pooled = upload_run(campaign=adhoc, owner=people["participant"], data=b"301 Q0 d1 1 1 pooled\n")
    free = upload_run(campaign=adhoc, owner=people["participant"], data=b"301 Q0 d2 1 1 free\n")
    pool = create_pool(campaign=adhoc, name="p1", runs=[pooled.pk])
    data_import = DataImport.objects.create(kind=DataImport.Kind.QRELS, campaign=adhoc, file_names=["q.txt"])
    annotator = MachineLabelSource.objects.create(name="annotator-1", kind="classifier", collection=web,
                                                  campaign_id=adhoc.pk, status="ready", grades=[0, 1])
    machine_job = MachineJob.objects.create(source=annotator, kind="label", status="running", items_total=4)
    return {
        "data_import": data_import.pk, "machine_job": machine_job.pk,
        "token": mine.token, "other_token": theirs.token, "assignment": mine, "outline_campaign": outline,
        "campaign": adhoc.name, "run": free.pk, "pool": pool.name, "topic": topic, "passages": passages,
        "outline": outline.name, "review": review.pk,
    }


@pytest.fixture
def client_for(people):
    """client_for(role, **client_options) → a Django test client signed in as that role (a session, no token)."""

    def make(role, **options):
        client = Client(**options)
        if role != "anonymous":
            client.force_login(people[role])
        return client

    return make
