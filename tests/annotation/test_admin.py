"""Organisers can use every admin page (lists with counts, search, filters); assessors cannot get in."""

import pytest
from django.contrib import admin
from django.urls import reverse
from django.utils import timezone

from annotation.roles import Role, ensure_groups
from assessments.models import Topic
from retrieval.models import WorkerNode
from tests import factories

pytestmark = pytest.mark.django_db

PROJECT_APPS = {"retrieval", "assessments", "annotation"}


@pytest.fixture
def organiser():
    groups = ensure_groups()
    user = factories.user("org", is_staff=True)
    user.groups.add(groups[Role.ORGANISER])
    return user


@pytest.fixture
def some_data():
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0001", facets=[("tqa2:L_0001/T_1", "Heading <b>one</b>")], title="water")
    p1, p2 = factories.passage(coll, "a" * 40), factories.passage(coll, "b" * 40, text="<script>alert(1)</script>")
    run = factories.run(coll, "guir", {topic: [p1, p2]})
    pool = factories.pool(coll, [topic], [run])
    WorkerNode.objects.create(name="gpu1@water", started_at=timezone.now())
    return topic, pool


def project_models():
    return [m for m in admin.site._registry if m._meta.app_label in PROJECT_APPS]


def test_every_project_model_has_an_admin_page():
    from django.apps import apps

    models = {m for label in PROJECT_APPS for m in apps.get_app_config(label).get_models()}
    assert models - set(project_models()) == set()


def test_an_organiser_can_open_every_list_and_search_it(client, organiser, some_data):
    client.force_login(organiser)
    for model in project_models():
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        response = client.get(url)
        assert response.status_code == 200, url
        assert ".None<" not in response.content.decode(), f"{url} shows a related manager instead of a value"
        assert client.get(url, {"q": "water"}).status_code == 200, url


def test_the_topic_list_shows_counts(client, organiser, some_data):
    client.force_login(organiser)
    page = client.get(reverse("admin:assessments_topic_changelist")).content.decode()
    assert "tqa2:L_0001" in page
    assert '<td class="field-facets">1</td>' in page
    assert '<td class="field-entries">2</td>' in page


def test_passage_text_is_escaped_in_the_admin(client, organiser, some_data):
    client.force_login(organiser)
    page = client.get(reverse("admin:retrieval_passage_changelist")).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_an_assessor_is_sent_to_the_login_page(client):
    groups = ensure_groups()
    assessor = factories.user("judge")
    assessor.groups.add(groups[Role.ASSESSOR])
    client.force_login(assessor)
    response = client.get(reverse("admin:assessments_topic_changelist"))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_judgement_history_cannot_be_edited_in_the_admin(client, organiser):
    client.force_login(organiser)
    assert client.get(reverse("admin:assessments_judgementchange_add")).status_code == 403


def test_an_organiser_downloads_a_pools_qrels_from_the_pool_list(client, organiser, some_data):
    from assessments.models import Layer

    topic, pool = some_data
    p1, p2 = [e.passage for e in topic.run_entries.order_by("rank")]
    for name, grade in (("j1", "must"), ("j2", "must"), ("j3", "can")):
        factories.judgement(factories.user(name), topic, p1, relevance=grade, facet="tqa2:L_0001/T_1")
    factories.judgement(factories.user("j4"), topic, p2, layer=Layer.REMOVAL, value=True)
    client.force_login(organiser)

    response = client.post(reverse("admin:assessments_pool_changelist"),
                           {"action": "download_page_qrels", "_selected_action": [pool.pk]})

    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{pool.name}-page.qrels"'
    body = b"".join(response.streaming_content).decode()
    assert body == f"tqa2:L_0001 0 {'a' * 40} 3\ntqa2:L_0001 0 {'b' * 40} 0\n"


def test_downloading_qrels_of_a_pool_without_judgements_says_so(client, organiser, some_data):
    _, pool = some_data
    client.force_login(organiser)
    response = client.post(reverse("admin:assessments_pool_changelist"),
                           {"action": "download_page_qrels", "_selected_action": [pool.pk]}, follow=True)
    assert f"Pool {pool.name} has no judgements yet." in response.content.decode()
