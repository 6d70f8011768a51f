"""A campaign's pools (/campaigns/<name>/pools/): pick runs and/or retrievers, preview the pool, build it, follow
the build (the page polls /campaigns/<name>/pools/<pool>/status/)."""

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation.services.pool_setup import (
    PoolInvalid, delete_pool, forced_choice_items, new_pool, pair_items, pairable_pools, pool_deletion, poolable_runs,
    preview, rename_pool, retriever_list, study_runs,
)
from annotation.units import tasks
from annotation.views.console.common import campaign_of, organisers_only
from annotation.views.console.forms import PoolForm
from assessments.models import Pool, Run, StudyItem
from config.ids import parse_id
from retrieval.services import background


def _runs(campaign):
    track = getattr(campaign, "track", None)
    if track is None:
        return []
    return list(poolable_runs(campaign).exclude(source=Run.Source.RETRIEVER).with_counts().order_by("name"))


def _render(request, campaign, form, status=200, shown=None, error=None, deletion=None):
    pools = list(campaign.pools.with_counts().order_by("-created_at"))
    studies = tasks.of(campaign).studies
    choice = studies and campaign.settings.get("mode") == "choice"
    pair = studies and campaign.settings.get("mode") == "pair"
    track = getattr(campaign, "track", None)
    pair_sources = [  # (sources, a source in words, [(value, label)]) of the pair-item forms
        ("runs", "run", [(r.pk, r.label) for r in _pair_runs(campaign)]),
        ("pools", "pool", [(q.name, q.name) for q in pairable_pools(campaign, track.collection_id).order_by("name")]),
    ] if pair and track else []
    for pool in pools:
        pool.study_runs = study_runs(pool) if choice and pool.status == Pool.Status.READY else []
        pool.study_item_count = StudyItem.objects.filter(pool=pool).count() if choice or pair else 0
    return render(request, "annotation/console/pools.html", {
        "choice": choice, "choice_candidates": campaign.settings.get("choice_candidates", 20), "error": error,
        "pair": pair, "pair_sources": pair_sources,
        "campaign": campaign, "tab": "pools", "form": form, "pools": pools, "preview": shown, "deletion": deletion,
        "runs": _runs(campaign), "topic_count": campaign.track.topics.count() if hasattr(campaign, "track") else 0,
    }, status=status)


def _pair_runs(campaign):
    """The runs pair items may come from (every run the campaign may pool, our retrievers' too), labelled."""
    from assessments.services.runs import run_labels

    runs = list(poolable_runs(campaign).order_by("name"))
    labels = run_labels(runs)
    for run in runs:
        run.label = labels[run.pk]
    return runs


def _options(form):
    data = form.cleaned_data
    retrievers = retriever_list(bm25=data["bm25"], dense=data["dense"], encoder=data["encoder"],
                                rerankers=data["reranker_list"])
    return retrievers, [int(r) for r in data["runs"]]


@require_http_methods(["GET", "POST"])
@organisers_only
def pools_page(request, name):
    """The campaign's pools with their state, and the form for a new one; a POST with `preview` previews the pool
    (a POST, so the form's CSRF token never lands in the address bar or the history), without it builds it."""
    campaign = campaign_of(name)
    runs = _runs(campaign)
    if request.method == "POST" and request.POST.get("action") == "study_items":
        return _study_items(request, campaign, runs)
    if request.method == "POST" and request.POST.get("action") == "pair_items":
        return _pair_items(request, campaign, runs)
    if request.method == "POST" and request.POST.get("action") in ("rename", "delete"):
        return _rename_or_delete(request, campaign, runs)
    if request.method == "GET":
        default = f"{campaign.name}-pool-{campaign.pools.count() + 1}"
        return _render(request, campaign, PoolForm(runs=runs, initial={"name": default}))
    form = PoolForm(request.POST, runs=runs)
    if not form.is_valid():
        return _render(request, campaign, form, status=400)
    data = form.cleaned_data
    try:
        retrievers, run_ids = _options(form)
        if "preview" in request.POST:
            shown = preview(campaign=campaign, runs=run_ids, retrievers=retrievers, depth=data["depth"],
                            per_topic=data["per_topic"], topics=data["topic_ids"], only_ranked=data["only_ranked"])
            return _render(request, campaign, form, shown=shown)
        pool = new_pool(
            campaign=campaign, name=data["name"], runs=run_ids, retrievers=retrievers, strategy=data["strategy"],
            depth=data["depth"], per_topic=data["per_topic"], fusion=data["fusion"], topics=data["topic_ids"],
            only_ranked=data["only_ranked"], created_by=request.user,
        )
    except PoolInvalid as exc:
        form.add_service_error(exc.field, exc.message)
        return _render(request, campaign, form, status=400)
    pool.refresh_from_db()
    messages.success(request, f"Pool {pool.name}: {pool.get_status_display().lower()}"
                              + (f" ({pool.error})" if pool.error else "."))
    return redirect(reverse("annotation:console_pools", args=[campaign.name]) + f"#pool-{pool.name}")


def _study_items(request, campaign, runs):
    """Make the forced-choice items of a ready pool (choice campaigns): the ground truth and N − 1 negatives."""
    raw_run, raw_n = request.POST.get("run", ""), request.POST.get("n", "")
    run, n = parse_id(raw_run, minimum=0), parse_id(raw_n, minimum=0)  # the service says what 0 is wrong for
    try:
        if run is None or n is None:
            raise PoolInvalid("run", "choose the run and the number of candidates")
        items = forced_choice_items(campaign=campaign, pool=request.POST.get("pool", ""), run=run, n=n)
    except PoolInvalid as exc:
        return _render(request, campaign, PoolForm(runs=runs), status=400, error=exc.message)
    messages.success(request, f"{len(items)} forced-choice items of {raw_n} candidates made.")
    return redirect("annotation:console_pools", name=campaign.name)


def _pair_items(request, campaign, runs):
    """Make pair-rating items of a pool (pair campaigns) from two runs or two pools, paired rank by rank."""
    sources = request.POST.get("sources", "")
    first, second = request.POST.get("first", ""), request.POST.get("second", "")
    depth = parse_id(request.POST.get("depth", ""), minimum=0)
    try:
        if sources == "runs":
            first, second = parse_id(first, minimum=1), parse_id(second, minimum=1)
        if depth is None:
            raise PoolInvalid("depth", "a whole number of ranks")
        items = pair_items(campaign=campaign, pool=request.POST.get("pool", ""), sources=sources, first=first,
                           second=second, depth=depth)
    except PoolInvalid as exc:
        return _render(request, campaign, PoolForm(runs=runs), status=400, error=str(exc))
    messages.success(request, f"{len(items)} pair{'s' if len(items) != 1 else ''} to rate made from the two {sources}.")
    return redirect("annotation:console_pools", name=campaign.name)


def _rename_or_delete(request, campaign, runs):
    """Rename a pool, or delete it: first what goes with it, counted (or why it cannot go), then, confirmed, for good."""
    pool, action = request.POST.get("pool", ""), request.POST.get("action")
    try:
        if action == "rename":
            renamed = rename_pool(campaign=campaign, pool=pool, name=request.POST.get("name", ""))
            messages.success(request, f"Pool {pool} is now {renamed.name}.")
            return redirect(reverse("annotation:console_pools", args=[campaign.name]) + f"#pool-{renamed.name}")
        if request.POST.get("confirm") != "1":
            counted = pool_deletion(campaign=campaign, pool=pool)
            if not counted.allowed:
                raise PoolInvalid("pool", counted.refusal)
            return _render(request, campaign, PoolForm(runs=runs), deletion=counted)
        gone = delete_pool(campaign=campaign, pool=pool)
    except PoolInvalid as exc:
        return _render(request, campaign, PoolForm(runs=runs), status=400, error=exc.message)
    messages.success(request, f"Pool {gone.pool.name} deleted, with {gone.goes_with_it}.")
    return redirect("annotation:console_pools", name=campaign.name)


@require_GET
@organisers_only
def pool_status(request, name, pool):
    """A pool's build as JSON for the page: status, candidates, error, and each retrieval job's status as the one
    progress endpoint gives it (retrieval.services.background.status_of)."""
    from assessments.services.pooling import pool_jobs

    campaign = campaign_of(name)
    found = campaign.pools.filter(name=pool).first()
    if found is None:
        raise Http404("No such pool.")
    jobs = [background.status_of(job) for job in pool_jobs(found)]
    return JsonResponse({
        "status": found.status, "label": found.get_status_display(), "error": found.error,
        "finished": found.status in (Pool.Status.READY, Pool.Status.FAILED),
        "candidates": found.candidates.count(), "jobs": jobs,
    })
