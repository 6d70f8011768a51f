"""A nuggets campaign's data (TREC RAG): answers uploaded or imported, nugget banks, nugget assignments.

The files' formats and checks are assessments.importers.rag's; the rules of nuggets (keys, banks) are
assessments.services.nuggets'; the scores are assessments.evaluation.nuggets'. Here a campaign becomes the
importers' Scope (its collection and topics), and an upload follows the run rules of submissions.upload_run: the
participant's quota, the size caps, the run names the uploader has used in the campaign.
"""

import io
import json

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Campaign, Track
from annotation.services.errors import ServiceError
from annotation.units import tasks
from annotation.services.submissions import RunLimitReached, UploadTooLarge, runs_allowed, upload_batches
from assessments.importers import rag
from assessments.models import Run
from assessments.services.nuggets import topic_banks
from retrieval.ingest import Problems, file_batches

MAX_SOURCE_FILE = 500  # Run.source_file
IMPORTED_BANKS = "imported-nuggets"  # the user an imported bank is stored under, unless another is named
IMPORTED_ASSIGNMENTS = "imported-assignments"


def campaign_scope(campaign) -> rag.Scope:
    """The Scope of a nuggets campaign; ServiceError(campaign) for another task or one without topics."""
    if isinstance(campaign, str):
        found = Campaign.objects.filter(name=campaign).first()
        if found is None:
            raise ServiceError("campaign", f"no campaign named {campaign!r}")
        campaign = found
    if not tasks.of(campaign).answers:
        raise ServiceError("campaign", f"campaign {campaign.name!r} is not a nuggets campaign "
                                       f"(its task is {campaign.get_task_display()})")
    track = Track.objects.select_related("collection").filter(campaign=campaign).first()
    if track is None:
        raise ServiceError("campaign", f"campaign {campaign.name!r} has no topics")
    topics = {topic.external_id: topic for topic in track.topics.all()}
    return rag.Scope(campaign.pk, campaign.name, track.collection, topics)


def import_answers_file(campaign, path, *, create_missing=False, run_fields=None) -> rag.AnswersImport:
    """An answers file (manage.py import_rag_answers, the campaign's Data page) as runs of the campaign's
    collection: the organisers' own, or with `run_fields` (the Data page: the uploader's, of the campaign's track)."""
    scope = campaign_scope(campaign)
    return rag.import_answers(file_batches(path), Problems(path), scope, create_missing=create_missing,
                              run_fields=run_fields)


def upload_answers(*, campaign, owner, data: bytes | None = None, file=None, filename="", limit_runs=True):
    """A participant's answers file (the API): checked whole, stored as `owner`'s runs of the campaign (source
    UPLOADED, track = the campaign) as upload_run stores runs. UploadTooLarge, RunLimitReached (with `limit_runs`,
    counting the file's runs), ServiceError, or ImportFailed listing every problem; in each case nothing is written."""
    scope = campaign_scope(campaign)
    source = (filename or "upload")[:MAX_SOURCE_FILE]
    stream, size = (io.BytesIO(data), len(data)) if file is None else (file, getattr(file, "size", None))
    if size is not None and size > settings.API_MAX_UPLOAD_BYTES:
        raise UploadTooLarge(f"the file has {size:,} bytes; at most {settings.API_MAX_UPLOAD_BYTES:,} are taken")
    problems = Problems(source)
    fields = {"owner": owner, "source": Run.Source.UPLOADED, "track": campaign.name}
    room = None
    if limit_runs:  # before reading, and while reading: a file past the limit is not held whole to be refused
        allowed, have = _runs_allowed_and_had(campaign, owner)
        room = allowed - have
        if room <= 0:
            raise RunLimitReached(f"you have {have} runs in campaign {campaign.name!r}, the most allowed ({allowed})")
    try:
        parsed = rag.parse_answers(upload_batches(stream, source, size), problems, scope, max_runs=room)
    except rag.TooManyRuns as exc:
        raise RunLimitReached(
            f"you have {have} runs in campaign {campaign.name!r} and the file brings {exc.runs} or more (line "
            f"{exc.line} starts run number {exc.runs}); at most {allowed} are allowed"
        ) from None
    with transaction.atomic():
        if limit_runs:  # again, under the owner's lock: two uploads at once cannot both pass the count
            get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
            allowed, have = _runs_allowed_and_had(campaign, owner)
            new = len({answer.run_id for answer in parsed})
            if have + new > allowed:
                raise RunLimitReached(
                    f"you have {have} runs in campaign {campaign.name!r} and the file brings {new}; at most "
                    f"{allowed} are allowed"
                )
        return rag.import_answers(iter(()), problems, scope, parsed=parsed, run_fields=fields)


def _runs_allowed_and_had(campaign, owner) -> tuple[int, int]:
    """How many runs `owner` may have in the campaign, and how many they have."""
    return runs_allowed(campaign.track), Run.objects.filter(owner=owner, track=campaign.name).count()


def importing_user(name):
    """The user imported labels are stored under, made (without a password: no sign-in) if new."""
    user, created = get_user_model().objects.get_or_create(username=name)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def import_banks_file(campaign, path, *, assessor=IMPORTED_BANKS) -> rag.BanksImport:
    """A nuggetizer nuggets file (manage.py import_nuggets): each topic's bank, as `assessor`'s."""
    scope = campaign_scope(campaign)
    problems = Problems(path)
    rows = rag.read_banks(file_batches(path), problems, scope)  # checked before the user is made
    return rag.import_nugget_banks(rows, problems, scope, assessor=importing_user(assessor))


def export_banks(campaign) -> str:
    """The campaign's banks in the nuggetizer's format (manage.py export_nuggets)."""
    scope = campaign_scope(campaign)
    return rag.nugget_lines(scope, topic_banks(scope.campaign_id))


def import_assignments_file(campaign, path, *, assessor=IMPORTED_ASSIGNMENTS) -> rag.AssignmentsImport:
    """A nuggetizer assignments file (manage.py import_nugget_assignments) as `assessor`'s labels."""
    scope = campaign_scope(campaign)
    problems = Problems(path)
    unanswered = []
    labels = rag.read_assignments(file_batches(path), problems, scope, unanswered)
    return rag.store_assignments(labels, problems, scope, assessor=importing_user(assessor), unanswered=unanswered)


def export_assignments(campaign, *, source=None):
    """The campaign's nugget labels as the nuggetizer's assignments file, one JSON line per run and topic
    (assessments.evaluation.nuggets.assignment_records: its calculate_nugget_scores gives exactly `scores`); the
    people's labels, or a machine source's (its id or name). ServiceError names campaign or source."""
    from assessments.evaluation.nuggets import assignment_records

    scope = campaign_scope(campaign)
    picked = None if source in (None, "") else _machine_source(scope, source)
    return "".join(json.dumps(record, ensure_ascii=False) + "\n"
                   for record in assignment_records(scope.campaign_id, source=picked))


def _machine_source(scope, source):
    """The campaign's machine source of nugget assignments named `source` (its id or name); ServiceError names it."""
    from assessments.services import machine

    try:
        return machine.nugget_source(scope.campaign_id, source)
    except machine.MachineInvalid as exc:
        raise ServiceError(exc.field, exc.message) from None


def scores(campaign, *, source=None) -> dict:
    """The campaign's nugget scores as export_nugget_scores, the API and the results page give them: the people's
    (assessments.evaluation.nuggets), with "compared_with_machine" (each LLM assignment source beside them: τ, α)
    when the campaign has one; or, with `source` (a machine source's id or name), that source's scores with
    "compared_with_people". ServiceError names campaign or source."""
    from assessments.evaluation.nuggets import compare_with_people, nugget_scores
    from assessments.services import machine

    scope = campaign_scope(campaign)
    people = nugget_scores(scope.campaign_id)
    if source in (None, ""):
        sources = [s for s in machine.nugget_sources(scope.campaign_id) if s.label_count]
        if sources:
            people["compared_with_machine"] = [compare_with_people(scope.campaign_id, s, people=people)
                                               for s in sources]
        return people
    picked = _machine_source(scope, source)
    found = nugget_scores(scope.campaign_id, source=picked)
    found["compared_with_people"] = compare_with_people(scope.campaign_id, picked, people=people, machine=found)
    return found


def llm_job(campaign, data, *, endpoint=None, model=None, per_minute=None, timeout=None, retries=None):
    """The LLM's nugget job (not yet sent) for a nuggets campaign, from the console's form, the API's body or
    manage.py llm_nuggets (`step` assign|suggest, `topics`, `limit`, `max_requests`, `max_tokens`, `retry_errors`),
    with the campaign's prompt (settings llm_nugget_assign_prompt / llm_nugget_suggest_prompt) or the default; the
    site's endpoint and model unless the command names others (its --endpoint, --model, --rate, --timeout,
    --retries). MachineInvalid names the field (`campaign` for a campaign of another task, the settings key for a
    stored prompt that no longer passes machine.check_prompt)."""
    from assessments.services import machine

    try:
        campaign_scope(campaign)
    except ServiceError as exc:
        raise machine.MachineInvalid(exc.field, exc.message) from None
    return machine.nuggets(
        campaign_id=campaign.pk, suggest=data["step"] == "suggest", topics=data.get("topics") or (),
        campaign_settings=campaign.settings, endpoint=endpoint, model=model, limit=data.get("limit"),
        max_requests=data.get("max_requests"), max_tokens=data.get("max_tokens"), per_minute=per_minute,
        timeout=timeout, retries=retries, retry_errors=bool(data.get("retry_errors")))
