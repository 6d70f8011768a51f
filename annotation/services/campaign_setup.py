"""Making a campaign with everything the console's form gives: its topics (picked, all, or from an uploaded topic
file), guidelines, overlap, qualification, review sampling and task settings, in one transaction.

The track (collection and topics) is made by annotation.services.campaigns.create_campaign, as the
create_campaign command makes it; an uploaded topic file is imported by the importer its command calls
(annotation.services.data_imports.import_files), so a bad file writes nothing, not even the campaign.
"""

import tempfile
from dataclasses import replace
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import get_valid_filename

from annotation.models import Assignment, Campaign, CampaignTopic
from annotation.services.campaigns import CampaignError, create_campaign
from annotation.services.data_imports import import_files
from annotation.services.errors import ServiceError
from annotation.units import tasks
from assessments.labels import DEFAULT_ADHOC_SCALE, DEFAULT_PLOT_SCALE
from assessments.models import QrelSet, Topic

TOPIC_FILE_KIND = {task.task: task.topic_file for task in tasks.TASKS.values() if task.topic_file}  # its topics file
PLOT_MODES = tuple(Assignment.MODES)  # a plot campaign's modes: the model's (Assignment.kind_of), label, choice, pair
DEFAULT_CONTEXT = 5
DEFAULT_CHOICE_CANDIDATES = 20  # the ground truth and 19 negatives (seed 000 §5.3)
RESERVED_NAMES = {"new"}  # /campaigns/new/ is the form


class SetupInvalid(ServiceError):
    """A campaign that cannot be made as asked; `field` names the form field to fix."""


def plot_settings(*, mode="label", scale=None, context_sentences=DEFAULT_CONTEXT,
                  choice_candidates=DEFAULT_CHOICE_CANDIDATES) -> dict:
    """The settings dict of a plot campaign (what annotation.services.plot and .status read), checked."""
    if mode not in PLOT_MODES:
        raise SetupInvalid("mode", f"{mode!r} is not one of {', '.join(PLOT_MODES)}")
    scale = [list(e) for e in (scale or DEFAULT_PLOT_SCALE)]
    values = [v for v, _ in scale]
    if len(scale) < 2 or len(set(values)) != len(values) or any(v < 0 for v in values):
        raise SetupInvalid("plot_scale", "give at least two answers with distinct grades 0 or more")
    if not 0 <= context_sentences <= 50:
        raise SetupInvalid("context_sentences", "from 0 to 50 sentences")
    if not 2 <= choice_candidates <= 50:
        raise SetupInvalid("choice_candidates", "from 2 to 50 candidates")
    return {"mode": mode, "plot_scale": scale, "context_sentences": context_sentences,
            "choice_candidates": choice_candidates}


def adhoc_settings(*, scale=DEFAULT_ADHOC_SCALE, view="one", evidence=True) -> dict:
    """The settings dict of an ad hoc campaign (what annotation.services.adhoc reads), checked."""
    from annotation.services import adhoc

    try:
        adhoc.check_scale(scale)
    except ValueError as exc:
        raise SetupInvalid("grade_scale", str(exc).partition(": ")[2] or str(exc)) from exc
    if view not in adhoc.VIEWS:
        raise SetupInvalid("adhoc_view", f"expected one of {', '.join(adhoc.VIEWS)}")
    return {"grade_scale": scale, "adhoc_view": view, "evidence": bool(evidence)}


def new_campaign(
    *, name, task, title="", collection="", topics=(), topic_file=None, guidelines="", overlap=1,
    qualification_topics=(), qualification_gold=None, qualification_threshold=0.9, qualification_attempts=2,
    review_sample_size=10, review_threshold=0.95, show_run_names=False, settings=None, max_runs=None,
    max_per_topic=None,
) -> Campaign:
    """Make a campaign as the console's form describes it; SetupInvalid names the field, ImportFailed lists the
    topic file's problems. Nothing is written unless all of it is.

    `topics` are external ids (empty: every topic of the task's kind in the collection, or the topic file's);
    `topic_file` an Upload of the task's topic format (CAR outlines, plot queries); `qualification_gold` a
    QrelSet name.
    """
    if name in RESERVED_NAMES or Campaign.objects.filter(name=name).exists():
        raise SetupInvalid("name", f"a campaign named {name!r} already exists" if name not in RESERVED_NAMES
                           else f"{name!r} is reserved; choose another name")
    if task not in Campaign.Task.values:
        raise SetupInvalid("task", f"{task!r} is not one of {', '.join(Campaign.Task.values)}")
    gold = None
    if qualification_gold:
        gold = QrelSet.objects.filter(name=qualification_gold).first()
        if gold is None:
            raise SetupInvalid("qualification_gold", f"no qrel set named {qualification_gold!r}")
    if qualification_topics and gold is None:
        raise SetupInvalid("qualification_gold", "qualification topics need a qrel set of known answers")
    with transaction.atomic():
        topics = list(topics)
        if topic_file is not None:
            if task not in TOPIC_FILE_KIND:
                raise SetupInvalid("topic_file", f"{tasks.get(task).name} campaigns "
                                   "take their topics from the collection: upload them on the Data page first (Ad hoc "
                                   "topics), then choose every topic of the collection or pick them here")
            topics = _import_topic_file(task, topic_file, collection)
            if not collection:
                collection = _collection_of(topics)
        try:
            campaign = create_campaign(
                name=name, task=task, topics=topics, collection=collection or None, title=title,
                max_runs=max_runs, max_per_topic=max_per_topic,
            )
        except CampaignError as exc:
            raise SetupInvalid(_field_of(str(exc)), str(exc)) from exc
        campaign.guidelines = guidelines
        campaign.overlap = overlap
        campaign.qualification_gold = gold
        campaign.qualification_threshold = qualification_threshold
        campaign.qualification_attempts = qualification_attempts
        campaign.review_sample_size = review_sample_size
        campaign.review_threshold = review_threshold
        campaign.show_run_names = show_run_names
        campaign.settings = dict(settings or {})
        try:
            campaign.full_clean(validate_unique=False)
        except ValidationError as exc:
            field, errors = next(iter(exc.message_dict.items()))
            raise SetupInvalid(field, " ".join(errors)) from exc
        campaign.save()
        _qualification(campaign, qualification_topics, gold)
    return campaign


def _import_topic_file(task, upload, collection) -> list[str]:
    """Import the topic file with its command's importer; the external ids of the topics it names."""
    kind = TOPIC_FILE_KIND[task]
    with tempfile.TemporaryDirectory(prefix="pooljudge-topics-") as folder:
        path = Path(folder) / (get_valid_filename(Path(upload.name).name) or "topics")
        with path.open("wb") as out:
            for chunk in upload.file.chunks() if hasattr(upload.file, "chunks") else [upload.file.read()]:
                out.write(chunk)
        from assessments.importers.car import DEFAULT_COLLECTION
        from retrieval.ingest import ImportFailed

        try:
            _, topic_ids = import_files(kind, [path], collection or DEFAULT_COLLECTION, {})
        except ImportFailed as exc:  # name the file as uploaded, not the temporary copy
            named = [replace(p, source=upload.name) if p.source == str(path) else p for p in exc.problems]
            raise ImportFailed(named, exc.total) from None
    return list(Topic.objects.filter(pk__in=topic_ids).order_by("external_id").values_list("external_id", flat=True))


def _collection_of(external_ids) -> str:
    names = sorted(set(Topic.objects.filter(external_id__in=external_ids).values_list("collection__name", flat=True)))
    if len(names) != 1:
        raise SetupInvalid("collection", f"the topic file's topics are in {len(names)} collections "
                                         f"({', '.join(names)}): choose one")
    return names[0]


def _field_of(message) -> str | None:
    for word, field in (("collection", "collection"), ("topics", "topics"), ("campaign named", "name"),
                        ("name:", "name"), ("title:", "title")):
        if word in message:
            return field
    return None


def _qualification(campaign, external_ids, gold) -> None:
    if not external_ids:
        return
    own = dict(campaign.track.topics.values_list("external_id", "pk"))
    outside = [t for t in external_ids if t not in own]
    if outside:
        raise SetupInvalid("qualification_topics", f"not topics of this campaign: {', '.join(outside)}")
    for external_id in dict.fromkeys(external_ids):
        CampaignTopic.objects.update_or_create(campaign=campaign, topic_id=own[external_id],
                                               defaults={"qualification": True})
