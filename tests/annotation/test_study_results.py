"""The organiser's study results page: human vs retriever accuracy on forced-choice items, pair ratings."""

import pytest
from django.urls import reverse

from annotation.roles import Role, ensure_groups
from assessments.models import Judgement, Layer, StudyItem
from assessments.services.judging import record_judgement
from assessments.studies import make_forced_choice_items
from tests import factories
from tests.assessments.plot_data import bm25_pool, load_book
from tests.retrieval.fixtures import index_dir  # noqa: F401

pytestmark = pytest.mark.django_db
EVIL = '<script>alert("x")</script>'


@pytest.fixture
def study(tmp_path, index_dir):  # noqa: F811
    book, topics = load_book(tmp_path)
    pool, run = bm25_pool(book, topics, name="plot-study")
    one, two = make_forced_choice_items(pool, run, n=3)
    return pool, run, one, two


def member(role, name):
    user = factories.user(name)
    user.groups.add(ensure_groups()[role])
    return user


@pytest.fixture
def organiser(client):
    user = member(Role.ORGANISER, "boss")
    client.force_login(user)
    return user


def choose(user, item, passage):
    record_judgement(assessor=user, layer=Layer.CHOICE, topic=item.topic, item=item.key, value=passage.external_id)


def url(pool):
    return reverse("annotation:study_results", args=[pool.name])


def test_the_organiser_sees_each_assessors_accuracy_beside_the_retrievers(client, organiser, study):
    pool, run, one, two = study
    ann, bob = factories.user(f"ann{EVIL}"), factories.user("bob")
    wrong = next(c for c in one.candidates.all() if c != one.answer)
    choose(ann, one, one.answer)
    choose(ann, two, two.answer)
    choose(bob, one, wrong)

    page = client.get(url(pool))

    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and 'id="chart-choice-accuracy"' in html
    assert "2 items, 2 answered by someone; 3 answers from 2 assessors." in " ".join(html.split())
    assert "67% (2/3)" in html and "100% (2/2)" in html and "0% (0/1)" in html  # all, ann, bob
    hits = sum(i.retriever_choice_id == i.answer_id for i in (one, two))
    assert f"{hits * 50}% ({hits}/2)" in html and f"Retriever {run.name}" in html
    assert EVIL not in html and "&lt;script&gt;" in html  # an assessor's name is text, never markup
    assert "This pool has no pairs to rate." in html


def test_pair_ratings_show_their_distribution(client, organiser, study):
    pool, run, one, _ = study
    chunks = list(one.candidates.all())
    pair = StudyItem.objects.create(pool=pool, kind=StudyItem.Kind.PAIR, key="pair:x", topic=one.topic,
                                    passage=chunks[0], passage2=chunks[1], similarity=0.9, metadata={"group": "most"})
    for name, rating in (("r1", 8), ("r2", 6)):
        record_judgement(assessor=factories.user(name), layer=Layer.RATING, topic=pair.topic, passage=pair.passage,
                         passage2=pair.passage2, item=pair.key, value=rating)
    html = " ".join(client.get(url(pool)).content.decode().split())
    assert "1 pair, 2 ratings. Mean rating: all 7.00, most similar pairs 7.00, least similar pairs –." in html
    assert 'id="chart-pair-ratings"' in html


def test_the_index_lists_pools_with_study_items(client, organiser, study):
    pool = study[0]
    html = client.get(reverse("annotation:study_index")).content.decode()
    assert f'href="{url(pool)}"' in html and ">2</td>" in html


@pytest.mark.parametrize("role", [None, Role.ASSESSOR, Role.REVIEWER])
def test_nobody_else_learns_the_page_exists(client, study, role):
    pool = study[0]
    if role is None:
        assert client.get(url(pool)).status_code == 302  # to sign in
        return
    client.force_login(member(role, "someone"))
    assert client.get(url(pool)).status_code == 404
    assert client.get(reverse("annotation:study_index")).status_code == 404


def test_an_unknown_pool_is_404_and_adjudicated_rows_are_not_answers(client, organiser, study):
    pool, run, one, _ = study
    assert client.get(reverse("annotation:study_results", args=["nope"])).status_code == 404
    judge = factories.user("judge")
    choose(judge, one, one.answer)
    Judgement.objects.filter(assessor=judge).update(adjudicated=True)
    html = " ".join(client.get(url(pool)).content.decode().split())
    assert "0 answers from 0 assessors" in html


def test_organisers_find_the_page_from_their_queue(client, organiser):
    factories.campaign("plot-choice", "plot")
    page = client.get(reverse("annotation:home"), follow=True).content.decode()  # organisers land on /campaigns/
    assert f'href="{reverse("annotation:study_index")}"' in page
    client.force_login(member(Role.ASSESSOR, "judge"))
    assert reverse("annotation:study_index") not in client.get(reverse("annotation:home")).content.decode()
