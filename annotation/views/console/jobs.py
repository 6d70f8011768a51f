"""THE progress endpoint of background work: GET /jobs/<kind>/<id>/ gives any job (a data import, a machine job, a
retrieval job) as JSON, as retrieval.services.background.status_of says it; the pages follow it with jobs.js."""

from django.http import Http404, JsonResponse
from django.views.decorators.http import require_GET

from annotation.views.console.common import organisers_only
from retrieval.services import background


@require_GET
@organisers_only
def job_status(request, kind, pk):
    """A job's status, items done of the total, rate, time left, what it is doing, error, who started it."""
    job = background.find(kind, pk)
    if job is None:
        raise Http404("No such job.")
    return JsonResponse(background.status_of(job))
