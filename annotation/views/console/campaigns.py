"""A new campaign (/campaigns/new/) and a campaign's home (/campaigns/<name>/): its progress and its parts."""

from django.contrib import messages
from django.db.models import Count, Q
from django.db.models.functions import Length
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.models import Assignment, DataImport
from annotation.reports.overview import campaign_overview
from annotation.services.campaign_setup import SetupInvalid, adhoc_settings, new_campaign, plot_settings
from annotation.services.campaigns import campaign_collections, campaign_topics
from annotation.services.data_imports import Upload
from annotation.services.errors import ServiceError
from annotation.views.console.common import campaign_of, more_problems, organisers_only, problems_of
from annotation.services.judging_order import OrderSettingsInvalid, set_topic_stop, settings_of
from annotation.services.review import campaign_reviewers
from annotation.units import tasks
from annotation.views.console.forms import CampaignForm, CampaignSettingsForm, JudgingOrderForm
from assessments.labels import DEFAULT_ADHOC_SCALE
from assessments.models import Pool, QrelSet, Run, Topic
from config.ids import natural_key
from retrieval.ingest import ImportFailed
from retrieval.models import Collection

TOPIC_PICK_LIMIT = 3000  # topics listed for the searchable pick; more are typed by id


def _new_context(form, problems=(), more=0):
    # the first TOPIC_PICK_LIMIT by (collection, id length, id): the same ones whatever is added; then as people read
    # them (config.ids.natural_key: 2 before 10, q2 before q10)
    topics = sorted(Topic.objects.order_by("collection__name", Length("external_id"), "external_id")
                    .values("external_id", "title", "kind", "collection__name")[:TOPIC_PICK_LIMIT],
                    key=lambda t: (t["collection__name"], natural_key(t["external_id"])))
    return {
        "form": form, "problems": problems, "more_problems": more,
        "collections": Collection.objects.order_by("name").annotate(topic_count=Count("topics")),
        "topic_choices": topics, "qrel_sets": QrelSet.objects.order_by("name").values_list("name", flat=True),
    }


@require_http_methods(["GET", "POST"])
@organisers_only
def campaign_new(request):
    """The form for a new campaign: task, collection, topics, guidelines, overlap, qualification, review, settings."""
    if request.method == "GET":
        return render(request, "annotation/console/campaign_new.html", _new_context(CampaignForm()))
    form = CampaignForm(request.POST, request.FILES)
    if not form.is_valid():
        return render(request, "annotation/console/campaign_new.html", _new_context(form), status=400)
    data = form.cleaned_data
    problems, more = [], 0
    try:
        settings = {}
        own = tasks.get(data["task"]).settings  # the task's own settings: plot's or ad hoc's scale
        if "plot_scale" in own:
            settings = plot_settings(mode=data["mode"], scale=data["plot_scale"],
                                     context_sentences=data["context_sentences"],
                                     choice_candidates=data["choice_candidates"])
            settings.update(form.order_settings())
        elif "grade_scale" in own:
            settings = adhoc_settings(scale=data["grade_scale"] or DEFAULT_ADHOC_SCALE, view=data["adhoc_view"] or "one",
                                      evidence=data["evidence"])
            settings.update(form.order_settings())
        upload = data.get("topic_file") if data["topics_from"] == CampaignForm.TOPICS_FILE else None
        campaign = new_campaign(
            name=data["name"], task=data["task"], title=data["title"], collection=data["collection"],
            topics=data["topic_ids"] if data["topics_from"] == CampaignForm.TOPICS_PICK else (),
            topic_file=Upload(upload.name, upload, upload.size) if upload else None,
            guidelines=data["guidelines"], overlap=data["overlap"],
            qualification_topics=data["qualification_ids"], qualification_gold=data["qualification_gold"] or None,
            qualification_threshold=data["qualification_threshold"] / 100,
            qualification_attempts=data["qualification_attempts"],
            review_sample_size=data["review_sample_size"], review_threshold=data["review_threshold"] / 100,
            show_run_names=data["show_run_names"], settings=settings, max_runs=data["max_runs"],
            max_per_topic=data["max_per_topic"],
        )
    except (SetupInvalid, OrderSettingsInvalid) as exc:
        form.add_service_error(exc.field, exc.message)
    except ImportFailed as exc:
        problems, more = problems_of(exc), more_problems(exc)
        form.add_error("topic_file", "the topic file has problems (listed above); nothing was made")
    else:
        count = campaign.track.topics.count()
        messages.success(request, f"Campaign {campaign.name} made with {count:,} topic{'s' if count != 1 else ''} "
                                  f"of collection {campaign.track.collection.name}.")
        return redirect("annotation:campaign_home", name=campaign.name)
    return render(request, "annotation/console/campaign_new.html", _new_context(form, problems, more), status=400)


@require_GET
@organisers_only
def campaign_home(request, name):
    """A campaign's home: progress, and the way to each of its parts (data, pools, people, work, results)."""
    return _home(request, campaign_of(name))


def _home(request, campaign, order_form=None, status=200, settings_form=None, change=None, again=False):
    line = next((x for x in campaign_overview() if x.campaign.pk == campaign.pk), None)
    track = getattr(campaign, "track", None)
    pools = list(campaign.pools.with_counts().order_by("name"))
    runs = Run.objects.filter(collection=track.collection).count() if track else 0
    assignments = Assignment.objects.filter(campaign=campaign)
    counts = assignments.aggregate(
        assessors=Count("assessor", distinct=True), revise=Count("id", filter=Q(status=Assignment.Status.REVISE)),
    )
    topic_count = campaign_topics(campaign).count()
    steps = [
        ("Data", "annotation:console_data", f"{topic_count:,} topics, {runs:,} runs" if topic_count else "no topics"),
        ("Pools", "annotation:console_pools",
         f"{len(pools)} pool{'s' if len(pools) != 1 else ''}, {sum(p.candidate_count for p in pools):,} candidates"),
        ("People and work", "annotation:console_work", f"{counts['assessors']} assessors"),
        ("Browse labels", "annotation:console_browse", "every label and its history, filtered and sorted"),
        ("Results", "annotation:console_results", "qrels, assessments, agreement, evaluation"),
    ]
    return render(request, "annotation/console/campaign_home.html", {
        "campaign": campaign, "line": line, "track": track, "pools": pools, "steps": steps, "counts": counts,
        "topic_count": topic_count, "collections": campaign_collections(campaign),
        "imports": DataImport.objects.filter(campaign=campaign)[:5],
        "building": [p for p in pools if p.status in (Pool.Status.PENDING, Pool.Status.BUILDING)],
        "order_form": order_form or _order_form(campaign),
        "settings_form": settings_form or _settings_form(campaign), "change": change,
        "again": again,
        "no_reviewer": campaign.review_sample_size > 0 and not campaign_reviewers(campaign).exists(),
    }, status=status)


def _campaign_assessors(campaign) -> list[str]:
    """The campaign's assessors now (they hold units of it): those overlap up may give more work by default."""
    return list(Assignment.objects.filter(campaign=campaign, qualification=False).order_by("assessor__username")
                .values_list("assessor__username", flat=True).distinct())


def _assessor_choices(campaign) -> list[str]:
    from django.contrib.auth import get_user_model

    from annotation.roles import Role

    people = set(get_user_model().objects.filter(is_active=True, groups__name=Role.ASSESSOR)
                 .values_list("username", flat=True))
    return sorted(people | set(_campaign_assessors(campaign)))


def _settings_form(campaign, data=None):
    current = _campaign_assessors(campaign)
    return CampaignSettingsForm(data, campaign=campaign, assessors=_assessor_choices(campaign),
                                initial=CampaignSettingsForm.initial_of(campaign, current))


@require_POST
@organisers_only
def campaign_settings(request, name):
    """Change the campaign's settings: first the effects on the work already done are listed (nothing changes),
    then, confirmed, they are applied (annotation.services.campaign_settings)."""
    from annotation.services.campaign_settings import change_settings

    campaign = campaign_of(name)
    form = _settings_form(campaign, request.POST)
    if not form.is_valid():
        return _home(request, campaign, settings_form=form, status=400)
    try:
        change = change_settings(campaign, confirm=form.cleaned_data["confirm"] or None,
                                 assessors=form.cleaned_data["assessors"], **form.values())
    except ServiceError as exc:
        form.add_service_error(exc.field, exc.message)
        return _home(request, campaign, settings_form=form, status=400)
    if not change.changed:
        messages.info(request, "Nothing changed.")
        return redirect("annotation:campaign_home", name=campaign.name)
    if change.applied:
        messages.success(request, "Settings changed: " + "; ".join(change.effects) + ".")
        return redirect("annotation:campaign_home", name=campaign.name)
    data = request.POST.copy()
    data["confirm"] = change.digest  # the next submit applies exactly these effects
    return _home(request, campaign, settings_form=_settings_form(campaign, data), change=change,
                 again=bool(form.cleaned_data["confirm"]))


def _order_form(campaign):
    try:
        current = settings_of(campaign)
    except OrderSettingsInvalid:
        return JudgingOrderForm()
    return JudgingOrderForm(initial={
        "judging_order": current.order, "judging_budget": current.budget, "machine_source": current.machine_source,
        "target_recall": None if current.target_recall is None else round(current.target_recall * 100),
        "hybrid_budget": (campaign.settings or {}).get("hybrid_budget"),
    })


@require_POST
@organisers_only
def judging_order(request, name):
    """Change a plot-labels campaign's judging order, target recall and budget (the queue follows at once)."""
    campaign = campaign_of(name)
    form = JudgingOrderForm(request.POST)
    if form.is_valid():
        try:
            changed = form.order_settings(campaign)
        except OrderSettingsInvalid as exc:
            form.add_service_error(exc.field, exc.message)
        else:
            campaign.settings = {**(campaign.settings or {}), **changed}  # machine_source kept unless given
            campaign.save(update_fields=["settings"])
            messages.success(request, f"Judging order set: {changed['judging_order']}.")
            return redirect("annotation:campaign_home", name=campaign.name)
    return _home(request, campaign, order_form=form, status=400)


@require_POST
@organisers_only
def topic_stop(request, name):
    """The organiser's word on one topic: stop it, keep it going, or follow the estimate again."""
    campaign = campaign_of(name)
    topic = request.POST.get("topic", "")
    try:
        set_topic_stop(campaign, topic, request.POST.get("stop", ""))
    except OrderSettingsInvalid as exc:
        return HttpResponseBadRequest(f"{exc.field}: {exc.message}", content_type="text/plain")
    messages.success(request, f"Topic {topic}: " + {"stop": "stopped", "go": "kept going"}.get(
        request.POST.get("stop", ""), "follows the estimate again") + ".")
    return redirect(reverse("annotation:dashboard", args=[campaign.name]) + "#stopping")
