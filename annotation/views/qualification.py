"""The qualification's worked examples (/qualification/<campaign>/examples/): what an assessor reads before their
qualification units start. Blind: topics, passages, the label expected and why; never a run or another's label."""

from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.models import Assignment, Campaign
from annotation.roles import is_organiser
from annotation.services.qualification import worked_examples
from annotation.views.campaigns import page_login_required


@require_GET
@page_login_required
def examples_page(request, name):
    """The campaign's worked examples, for its assessors with qualification units (and organisers); 404 otherwise."""
    campaign = get_object_or_404(Campaign.objects.select_related("track__collection"), name=name)
    units = Assignment.objects.filter(campaign=campaign, assessor=request.user, qualification=True)
    if not units.exists() and not is_organiser(request.user):
        raise Http404("No such page.")
    first = units.exclude(status=Assignment.Status.DONE).order_by("position", "id").first()
    return render(request, "annotation/qualification_examples.html", {
        "campaign": campaign, "examples": worked_examples(campaign), "first": first,
    })
