"""A campaign's pools (/campaigns/<name>/pools/): pick runs and/or retrievers, preview the pool, build it, follow
the build (the page polls /campaigns/<name>/pools/<pool>/status/)."""

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation.services.pool_setup import PoolInvalid, new_pool, poolable_runs, preview, retriever_list
from annotation.views.console.common import campaign_of, organisers_only
from annotation.views.console.forms import PoolForm
from assessments.models import Pool, Run


def _runs(campaign):
    track = getattr(campaign, "track", None)
    if track is None:
        return []
    return list(poolable_runs(campaign).exclude(source=Run.Source.RETRIEVER).with_counts().order_by("name"))


def _render(request, campaign, form, status=200, shown=None):
    pools = list(campaign.pools.with_counts().order_by("-created_at"))
    return render(request, "annotation/console/pools.html", {
        "campaign": campaign, "tab": "pools", "form": form, "pools": pools, "preview": shown,
        "runs": _runs(campaign), "topic_count": campaign.track.topics.count() if hasattr(campaign, "track") else 0,
    }, status=status)


def _options(form):
    data = form.cleaned_data
    retrievers = retriever_list(bm25=data["bm25"], dense=data["dense"], encoder=data["encoder"],
                                rerankers=data["reranker_list"])
    return retrievers, [int(r) for r in data["runs"]]


@require_http_methods(["GET", "POST"])
@organisers_only
def pools_page(request, name):
    """The campaign's pools with their state, and the form for a new one (its preview with `?preview`)."""
    campaign = campaign_of(name)
    runs = _runs(campaign)
    if request.method == "GET" and "preview" not in request.GET:
        default = f"{campaign.name}-pool-{campaign.pools.count() + 1}"
        return _render(request, campaign, PoolForm(runs=runs, initial={"name": default}))
    form = PoolForm(request.POST if request.method == "POST" else request.GET, runs=runs)
    if not form.is_valid():
        return _render(request, campaign, form, status=400)
    data = form.cleaned_data
    try:
        retrievers, run_ids = _options(form)
        if request.method == "GET":
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


@require_GET
@organisers_only
def pool_status(request, name, pool):
    """A pool's build as JSON for the page: status, candidates, error, and each retrieval job's progress."""
    from assessments.services.pooling import pool_jobs

    campaign = campaign_of(name)
    found = campaign.pools.filter(name=pool).first()
    if found is None:
        raise Http404("No such pool.")
    jobs = [{"line": job.progress_line(), "done": job.items_done, "total": job.items_total, "status": job.status}
            for job in pool_jobs(found)]
    return JsonResponse({
        "status": found.status, "label": found.get_status_display(), "error": found.error,
        "finished": found.status in (Pool.Status.READY, Pool.Status.FAILED),
        "candidates": found.candidates.count(), "jobs": jobs,
    })
