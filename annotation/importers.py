"""The importers that know campaigns, registered in THE importer registry (assessments.importers.registry): a
nuggets campaign's answers, nugget banks and nugget assignments, as import_rag_answers, import_nuggets and
import_nugget_assignments import them (under the commands' default users). Importing this module registers them;
annotation.services.data_imports and those commands import it, and `get` is the registry's, complete.
"""

from annotation.models import DataImport
from annotation.services import nuggets
from annotation.services.errors import ServiceError
from assessments.importers.registry import REGISTRY, get, register
from retrieval.ingest import ImportFailed, Option, Problem

__all__ = ["REGISTRY", "get"]

Kind = DataImport.Kind

ANSWER_OPTIONS = (
    Option("create_missing", type=bool,
           help="Make placeholder documents (without text) for references the collection lacks."),
)


def _into_campaign(campaign, importer, *args, **kwargs):
    """importer(campaign, *args, **kwargs), for a campaign still there; a ServiceError as the import's problem."""
    if campaign is None:
        raise ImportFailed([Problem("", None, None, "the campaign this import was for is gone")])
    try:
        return importer(campaign, *args, **kwargs)
    except ServiceError as exc:  # the campaign changed since the upload (no topics now)
        raise ImportFailed([Problem("", None, exc.field, exc.message)]) from None


@register(Kind.ANSWERS.value, command="import_rag_answers", options=ANSWER_OPTIONS, campaign_only=True)
def _answers(paths, collection, options, *, progress=None, campaign=None, owner=None):
    """The uploader's runs of the campaign, as a TREC run uploaded there is."""
    submitted = {"track": campaign.name, "owner": owner} if campaign is not None and owner is not None else {}
    return _into_campaign(campaign, nuggets.import_answers_file, paths[0],
                          create_missing=bool(options.get("create_missing")), run_fields=submitted).summary(), []


@register(Kind.NUGGETS.value, command="import_nuggets", campaign_only=True)
def _nuggets(paths, collection, options, *, progress=None, campaign=None, owner=None):
    return _into_campaign(campaign, nuggets.import_banks_file, paths[0]).summary(), []


@register(Kind.NUGGET_ASSIGNMENTS.value, command="import_nugget_assignments", campaign_only=True)
def _nugget_assignments(paths, collection, options, *, progress=None, campaign=None, owner=None):
    return _into_campaign(campaign, nuggets.import_assignments_file, paths[0]).summary(), []
