"""The organiser's study results: human vs retriever accuracy on a pool's forced-choice items, pair ratings.

Organisers only (anyone else gets 404, as on the other campaign pages). Figures come from
assessments.studies; the charts are annotation.reports.dashboard's inline SVG bars with their numbers.
"""

from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.views.campaigns import organisers_only
from annotation.reports.dashboard import hbars
from assessments.models import Pool, StudyItem
from assessments.studies import forced_choice_accuracy, pair_ratings


def _ratio(part, whole):
    return f"{part / whole:.0%} ({part}/{whole})" if whole else "– (0/0)"


def accuracy_chart(accuracy) -> dict:
    """Bars of accuracy: all humans together, each assessor, then each retriever on the items humans answered."""
    human = accuracy["human"]
    rows = [("All assessors", human["accuracy"], _ratio(human["correct"], human["answered"]))]
    rows += [(a["assessor"], a["accuracy"], _ratio(a["correct"], a["answered"])) for a in accuracy["assessors"]]
    rows += [(f"Retriever {r['run']}", r["accuracy"], _ratio(r["correct"], r["items"])) for r in accuracy["retrievers"]]
    chart = hbars("choice-accuracy", "Forced choice: accuracy, humans and retriever on the same items",
                  [(label, value) for label, value, _ in rows], unit="accuracy", fmt="{:.0%}")
    for bar, (_, _, text) in zip(chart["bars"], rows):
        bar["text"] = text
    chart["table"] = {"head": ["who", "accuracy (correct/answered)"], "rows": [[label, text] for label, _, text in rows]}
    return chart


def ratings_chart(ratings) -> dict:
    """Bars of how often each rating 1-10 was given, with the counts for the most and least similar pairs."""
    counts = ratings["all"]["histogram"]
    chart = hbars("pair-ratings", "Pair ratings: how often each rating was given",
                  [(str(value), counts[value - 1]) for value in range(1, 11)], unit="ratings")
    chart["table"] = {
        "head": ["rating", "all pairs", "most similar", "least similar"],
        "rows": [[value, counts[value - 1], ratings["most"]["histogram"][value - 1], ratings["least"]["histogram"][value - 1]]
                 for value in range(1, 11)],
    }
    return chart


@require_GET
@organisers_only
def study_index(request):
    """The pools that have study items, with how many of each kind."""
    pools = {}
    for name, kind in StudyItem.objects.order_by("pool__name").values_list("pool__name", "kind"):
        pools.setdefault(name, {"choice": 0, "pair": 0})[kind] += 1
    return render(request, "annotation/study_results.html", {"pools": pools, "index": True})


@require_GET
@organisers_only
def study_results(request, name):
    """One pool's forced-choice accuracy (humans vs retriever) and pair-rating distribution."""
    pool = get_object_or_404(Pool, name=name)
    accuracy = forced_choice_accuracy(pool)
    ratings = pair_ratings(pool)
    return render(request, "annotation/study_results.html", {
        "pool": pool,
        "accuracy": accuracy,
        "ratings": ratings,
        "accuracy_chart": accuracy_chart(accuracy) if accuracy["items"] else None,
        "ratings_chart": ratings_chart(ratings) if ratings["items"] else None,
    })
