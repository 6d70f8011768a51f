"""Changing a campaign's settings after creation (annotation.services.campaign_settings): a preview says what each
change does and writes nothing; the confirmed change does exactly that. A scale gains grades but loses none in
use; overlap up adds assessors through assign_campaign, down takes back only unstarted units."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, Campaign
from annotation.roles import Role, ensure_groups
from annotation.services.assignment import assign_campaign
from annotation.services.campaign_settings import SettingsChangeInvalid, change_settings
from assessments.models import Pool, PoolCandidate, Topic
from tests import factories

pytestmark = pytest.mark.django_db

BINARY_PLUS = [[2, "Highly relevant", "Says it outright."], [1, "Relevant", "Says some of it."],
               [0, "Not relevant", "Nothing of it."]]


def adhoc_campaign(name="adhoc-edit", topics=2, assessors=("ann", "bob", "cat"), overlap=1):
    """An ad hoc campaign of `topics` topics, 2 documents each, on the binary scale, given to `assessors`."""
    coll = factories.collection(f"{name}-docs", kind="documents")
    pool = Pool.objects.create(name=f"{name}-pool", collection=coll, status=Pool.Status.READY)
    made = []
    for i in range(1, topics + 1):
        topic = factories.topic(coll, f"{400 + i}", kind=Topic.Kind.ADHOC, title=f"topic {i}")
        made.append(topic)
        for j in range(2):
            doc = factories.passage(coll, f"D{i}-{j}", title=f"doc {i}.{j}", text=f"Text {i} {j}.")
            PoolCandidate.objects.create(pool=pool, topic=topic, passage=doc, rank=j + 1)
    pool.topics.set(made)
    campaign = factories.campaign(name, Campaign.Task.ADHOC, settings={"grade_scale": "binary"})
    group = ensure_groups()[Role.ASSESSOR]
    for username in assessors:
        factories.user(username).groups.add(group)
    assign_campaign(campaign, list(assessors), pools=[pool], overlap=overlap, seed=0)
    return campaign, made


def holders(campaign):
    """{topic external id: sorted usernames holding it}."""
    found = {}
    for topic, user in Assignment.objects.filter(campaign=campaign).values_list("topic__external_id", "assessor__username"):
        found.setdefault(topic, set()).add(user)
    return {t: sorted(u) for t, u in sorted(found.items())}


def grade(campaign, username, topic, value):
    unit = Assignment.objects.get(campaign=campaign, assessor__username=username, topic=topic)
    passage = PoolCandidate.objects.filter(pool=unit.pool, topic=topic).order_by("rank").first().passage
    factories.judgement(unit.assessor, topic, passage, layer="grade", value=value, campaign=campaign)
    Assignment.objects.filter(pk=unit.pk).update(status=Assignment.Status.IN_PROGRESS)


def test_a_preview_says_what_overlap_up_does_and_writes_nothing():
    campaign, _ = adhoc_campaign()
    before = factories.db_snapshot()
    change = change_settings(campaign, overlap=2, assessors=["ann", "bob", "cat"])
    assert not change.applied and change.changed == ["overlap"]
    assert change.effects[0].startswith("overlap 1 → 2 adds 2 units for 2 assessors (")
    assert factories.db_snapshot() == before and Campaign.objects.get(pk=campaign.pk).overlap == 1


def test_confirmed_overlap_up_gives_each_topic_a_second_assessor_as_the_preview_said():
    campaign, _ = adhoc_campaign()
    preview = change_settings(campaign, overlap=2, assessors=["ann", "bob", "cat"])
    done = change_settings(campaign, overlap=2, assessors=["ann", "bob", "cat"], confirm=preview.digest)
    assert done.applied and done.effects == preview.effects
    new = Assignment.objects.filter(campaign=campaign).order_by("-id")[:2].values_list("assessor__username", flat=True)
    assert done.effects[0].endswith("(" + ", ".join(f"{name} 1" for name in sorted(new)) + ")")
    assert campaign.overlap == 2
    assert all(len(users) == 2 for users in holders(campaign).values())
    assert Assignment.objects.filter(campaign=campaign).count() == 4


def test_overlap_up_beyond_the_named_assessors_is_refused_naming_overlap():
    campaign, _ = adhoc_campaign(assessors=("ann", "bob"))
    with pytest.raises(Exception) as caught:
        change_settings(campaign, overlap=3, assessors=["ann", "bob"])
    assert caught.value.field == "overlap" and "only 2 assessors" in caught.value.message


def test_overlap_down_takes_back_only_unstarted_units_and_says_how_many_started_stay():
    campaign, topics = adhoc_campaign(topics=3, overlap=3)
    grade(campaign, "cat", topics[0], 1)  # cat started topic 401: it stays with cat
    preview = change_settings(campaign, overlap=2)
    assert preview.effects == ["overlap 3 → 2 takes back 3 unstarted units"]
    change_settings(campaign, overlap=2, confirm=preview.digest)
    held = holders(campaign)
    assert all(len(users) == 2 for users in held.values()) and "cat" in held["401"]


def test_overlap_down_where_everyone_started_takes_nothing_back_and_counts_what_stays():
    campaign, topics = adhoc_campaign(topics=1, overlap=3)
    for name in ("ann", "bob", "cat"):
        grade(campaign, name, topics[0], 1)
    preview = change_settings(campaign, overlap=2)
    assert preview.effects == ["overlap 3 → 2 takes back 0 unstarted units; 3 started units stay with the "
                               "assessors who began them, over the overlap"]
    change_settings(campaign, overlap=2, confirm=preview.digest)
    assert Assignment.objects.filter(campaign=campaign).count() == 3


def test_a_scale_gains_a_grade_and_the_labels_keep_theirs():
    campaign, topics = adhoc_campaign()
    grade(campaign, holders(campaign)["401"][0], topics[0], 1)
    preview = change_settings(campaign, grade_scale=BINARY_PLUS)
    assert preview.effects[0] == "grade 2 ('Highly relevant') added: assessors can give it from their next page"
    assert preview.effects[-1] == "1 label already given keeps its grade"
    change_settings(campaign, grade_scale=BINARY_PLUS, confirm=preview.digest)
    from annotation.services.adhoc import grade_scale

    assert [v for v, *_ in grade_scale(campaign)] == [2, 1, 0]


def test_a_scale_cannot_lose_a_grade_in_use_the_error_names_the_field_and_the_count():
    campaign, topics = adhoc_campaign(overlap=2)
    for name in holders(campaign)["401"]:
        grade(campaign, name, topics[0], 1)
    with pytest.raises(SettingsChangeInvalid) as caught:
        change_settings(campaign, grade_scale=[[2, "Highly"], [0, "Not relevant"]])
    assert caught.value.field == "grade_scale"
    assert "grade 1 ('Relevant') is used by 2 labels" in caught.value.message
    # a grade no label uses may go
    change = change_settings(campaign, grade_scale=[[1, "Relevant"], [3, "Perfect"]])
    assert "grade 0 ('Not relevant') leaves the scale (no label uses it)" in change.effects


def test_a_stale_confirmation_applies_nothing():
    campaign, topics = adhoc_campaign()
    preview = change_settings(campaign, overlap=2, assessors=["ann", "bob", "cat"])
    Assignment.objects.filter(campaign=campaign, assessor__username="cat").delete()  # the work moved meanwhile
    again = change_settings(campaign, overlap=2, assessors=["ann", "bob", "cat"], confirm=preview.digest)
    assert not again.applied and again.effects != preview.effects
    assert Campaign.objects.get(pk=campaign.pk).overlap == 1


def test_other_settings_say_what_they_do():
    campaign, _ = adhoc_campaign()
    change = change_settings(campaign, guidelines="Read the narrative.", show_run_names=True, review_threshold=0.8)
    assert change.effects == [
        "guidelines changed: assessors see the new text on their next page (2 units not done yet)",
        "run names shown: the 0 units of run articles not done yet show which run wrote them",
        "review pass mark 95% → 80%: applies to batches finished from now on; 0 open reviews keep theirs",
    ]
    with pytest.raises(SettingsChangeInvalid) as caught:
        change_settings(campaign, review_threshold=1.5)
    assert caught.value.field == "review_threshold"
    with pytest.raises(SettingsChangeInvalid) as caught:
        change_settings(campaign, plot_scale=[[1, "a"], [0, "b"]])
    assert caught.value.field == "plot_scale"


def organiser(client):
    ensure_groups()
    boss = factories.user("boss")
    boss.groups.add(ensure_groups()[Role.ORGANISER])
    client.force_login(boss)
    return boss


def form_data(campaign, **changes):
    data = {"title": campaign.title, "guidelines": "", "overlap": campaign.overlap, "assessors": ["ann", "bob", "cat"],
            "review_sample_size": 10, "review_threshold": 95, "qualification_threshold": 90,
            "qualification_attempts": 2, "grade_scale": "1 Relevant\n0 Not relevant", "adhoc_view": "one",
            "evidence": "on", "blind_share": 20}
    data.update(changes)
    return data


def test_the_page_previews_then_applies_and_a_lost_grade_is_a_400_naming_the_field(client):
    campaign, topics = adhoc_campaign()
    organiser(client)
    url = reverse("annotation:console_campaign_settings", args=[campaign.name])
    response = client.post(url, form_data(campaign, overlap=2))
    assert response.status_code == 200, response.context["settings_form"].errors
    assert "overlap 1 → 2 adds 2 units for 2 assessors (" in response.content.decode()
    assert Assignment.objects.filter(campaign=campaign).count() == 2
    digest = response.context["change"].digest
    response = client.post(url, form_data(campaign, overlap=2, confirm=digest))
    assert response.status_code == 302 and Assignment.objects.filter(campaign=campaign).count() == 4
    grade(campaign, holders(campaign)["401"][0], topics[0], 0)
    response = client.post(url, form_data(campaign, overlap=2, grade_scale="1 Relevant\n2 Highly"))
    assert response.status_code == 400
    assert "grade 0 (&#x27;Not relevant&#x27;) is used by 1 label" in response.content.decode()
    assert response.context["settings_form"].errors["grade_scale"]


def test_only_organisers_reach_the_settings_form(client):
    campaign, _ = adhoc_campaign()
    client.force_login(factories.user("someone"))
    url = reverse("annotation:console_campaign_settings", args=[campaign.name])
    assert client.post(url, form_data(campaign, overlap=2)).status_code == 404
    assert client.get(url).status_code in (404, 405)


def admin_save(campaign, **changes):
    """Save the campaign in the admin's form with `changes`: (form, messages)."""
    from django.contrib.admin.sites import site
    from django.contrib.messages.storage.fallback import FallbackStorage
    from django.forms.models import model_to_dict
    from django.test import RequestFactory

    model_admin = site._registry[Campaign]
    data = {k: v for k, v in model_to_dict(campaign).items() if v is not None}
    data["settings"] = __import__("json").dumps(campaign.settings)
    data["pools"] = [p.pk for p in campaign.pools.all()]
    data.update(changes)
    form = model_admin.form(data, instance=Campaign.objects.get(pk=campaign.pk))
    if not form.is_valid():
        return form, []
    request = RequestFactory().post("/")
    request.session, request.user = {}, factories.user("admin-boss", is_staff=True, is_superuser=True)
    request._messages = FallbackStorage(request)
    model_admin.save_model(request, form.save(commit=False), form, change=True)
    return form, [str(m) for m in request._messages]


def test_the_admin_applies_a_change_through_the_service_and_refuses_a_lost_grade_beside_its_field():
    campaign, topics = adhoc_campaign(topics=2, overlap=2)
    form, said = admin_save(campaign, overlap=1)
    assert form.is_valid() and said == ["Settings changed: overlap 2 → 1 takes back 2 unstarted units."]
    assert Campaign.objects.get(pk=campaign.pk).overlap == 1
    assert all(len(users) == 1 for users in holders(campaign).values())
    grade(campaign, holders(campaign)["401"][0], topics[0], 1)
    form, _ = admin_save(Campaign.objects.get(pk=campaign.pk),
                         settings='{"grade_scale": [[3, "Perfect"], [0, "Not relevant"]]}')
    assert "grade 1 ('Relevant') is used by 1 label" in " ".join(form.errors["__all__"])
