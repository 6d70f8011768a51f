"""The data browser (/campaigns/<name>/browse/): the campaign's labels filtered and sorted a page at a time, one item
with every label and its history, a pool's candidates with the runs that brought them. GETs only: nothing here
writes. The rules are annotation.services.browser's; a filter that names nothing is a 400 naming it."""

from urllib.parse import urlencode

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.models import Assignment
from annotation.services import browser
from annotation.views.console.common import campaign_of, organisers_only
from config.ids import parse_id


@require_GET
@organisers_only
def browse(request, name):
    """Every label of the campaign (topic, passage, assessor, unit status, label, time, machine label where shown)."""
    campaign = campaign_of(name)
    error, page, filters = None, browser.Page(rows=[]), browser.Filters()
    try:
        filters = browser.read_filters(request.GET)
        page = browser.labels(campaign, filters)
    except browser.BrowseInvalid as exc:
        error = exc
    return render(request, "annotation/console/browse.html", {
        "campaign": campaign, "tab": "browse", "filters": filters, "page_size": browser.PAGE_SIZE, "page": page, "error": error,
        "topics": browser.topics(campaign), "assessors": browser.assessors(campaign),
        "statuses": Assignment.Status.choices, "labels": browser.label_choices(campaign),
        "sorts": [(key, words) for key, (words, _) in browser.SORTS.items()],
        "next_query": urlencode(filters.query(cursor=page.next_cursor)) if page.next_cursor else None,
        "previous_query": urlencode(filters.query(cursor=page.previous_cursor)) if page.previous_cursor else None,
        "back_query": urlencode(filters.query()),
    }, status=400 if error else 200)


@require_GET
@organisers_only
def browse_item(request, name, pk):
    """One item: its labels by every assessor and every change of them (who, when by either clock, old → new)."""
    campaign = campaign_of(name)
    judgement_id = parse_id(pk)
    found = browser.item(campaign, judgement_id) if judgement_id is not None else None
    if found is None:
        raise Http404("No such label in this campaign.")
    return render(request, "annotation/console/browse_item.html", {
        "campaign": campaign, "tab": "browse", "item": found, "j": found.judgement,
        "machine": browser.machine_labels(campaign, [found.judgement]).get(
            (found.judgement.topic_id, found.judgement.passage_id)),
    })


@require_GET
@organisers_only
def pool_candidates(request, name, pool):
    """A pool of the campaign opened: its candidates per topic in rank order, with the runs and ranks behind each."""
    campaign = campaign_of(name)
    found = campaign.pools.with_counts().filter(name=pool).first()
    if found is None:
        raise Http404("No such pool.")
    topic, cursor = request.GET.get("topic", "").strip(), request.GET.get("cursor", "").strip()
    error, page = None, browser.Page(rows=[])
    try:
        page = browser.pool_candidates(found, topic=topic, cursor=cursor)
    except browser.BrowseInvalid as exc:
        error = exc

    def query(cursor):
        return urlencode({k: v for k, v in {"topic": topic, "cursor": cursor}.items() if v})

    return render(request, "annotation/console/pool_candidates.html", {
        "campaign": campaign, "tab": "pools", "pool": found, "page": page, "error": error, "topic": topic,
        "topics": list(found.topics.order_by("external_id").values_list("external_id", flat=True)),
        "next_query": query(page.next_cursor) if page.next_cursor else None,
        "previous_query": query(page.previous_cursor) if page.previous_cursor else None,
    }, status=400 if error else 200)
