"""Runs uploaded by participants: checked whole with the importers' own rules, stored only when clean.

The campaign's task decides the format: outline campaigns take TREC CAR Y3 submissions (one page per
JSON line; the importer holds `tqa2:` pages to the Y3 rules), plot and ad hoc campaigns TREC
six-column runs. On top of the importers' checks an upload must name only the campaign's topics and
documents the collection already has (an upload never adds passages or topics), give a topic at
most the track's number of passages, and use a run name the uploader has not yet used in the campaign
(assessments.services.runs: other teams' names are never looked at, so an answer tells nothing of
them). The run is stored with its owner, source UPLOADED and track = the campaign's name.
"""

import io
from collections import Counter

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Track
from annotation.units import tasks
from assessments.importers.car import Y3_MAX_PARAGRAPHS, import_articles, parse_article_batches
from assessments.importers.topic_ids import topic_id
from assessments.importers.trec import import_parsed_run, topics_by_id
from assessments.importers.trec_files import RunReader
from assessments.models import CandidateSource, Run, Topic
from assessments.services.runs import name_scope
from retrieval.ingest import ImportFailed, InputTooLarge, Problem, Problems, text_batches

TREC_MAX_PER_TOPIC = 1000  # TREC's usual depth for submitted runs
MAX_SOURCE_FILE = 500  # Run.source_file
STOP_AFTER_PROBLEMS = 1000  # an upload with this many problems is not read further


class RunFormat:
    """Wire names of the upload formats."""

    TREC = "trec"
    CAR_Y3 = "car-y3"


class UploadTooLarge(Exception):
    """An upload over the size limits (compressed or not); nothing was read into the database."""


class RunLimitReached(Exception):
    """The owner already has as many runs in the campaign as a participant may upload."""


class RunInUse(Exception):
    """A run that a pool or an assignment uses, so it can no longer be deleted."""


def run_format(campaign) -> str:
    """The file format the campaign's runs come in."""
    return RunFormat.CAR_Y3 if tasks.of(campaign).article_runs else RunFormat.TREC


def runs_allowed(track) -> int:
    """Runs one participant may upload to the track's campaign."""
    return track.max_runs if track.max_runs is not None else settings.API_MAX_RUNS_PER_PARTICIPANT


def passages_allowed(track) -> int:
    """Passages a run may give one topic of the track."""
    if track.max_per_topic is not None:
        return track.max_per_topic
    return Y3_MAX_PARAGRAPHS if tasks.of(track.campaign).article_runs else TREC_MAX_PER_TOPIC


def upload_batches(stream, source: str, size=None):
    """The upload read as a stream (retrieval.ingest.text_batches): blocks of whole lines, gunzipped at most once
    and only up to API_MAX_UNCOMPRESSED_BYTES and API_MAX_COMPRESSION_RATIO, so that neither the file nor what
    it unpacks to is ever held whole; UploadTooLarge, naming the setting, as soon as a limit is passed."""
    try:
        yield from text_batches(
            stream, source, size=size, max_bytes=settings.API_MAX_UNCOMPRESSED_BYTES,
            max_ratio=settings.API_MAX_COMPRESSION_RATIO,
        )
    except InputTooLarge as exc:
        setting = "API_MAX_UNCOMPRESSED_BYTES" if exc.limit == "bytes" else "API_MAX_COMPRESSION_RATIO"
        raise UploadTooLarge(f"{exc} ({setting})") from None


def upload_run(*, campaign, owner, data: bytes | None = None, file=None, filename: str = "", limit_runs: bool = True) -> Run:
    """Check an uploaded run file whole and store it as `owner`'s run of `campaign`.

    The file is `data` (bytes) or `file` (a binary file object, e.g. the request's upload, with its `size`), read
    as a stream. Raises UploadTooLarge, RunLimitReached (when `limit_runs`, the participants' quota), or
    ImportFailed listing every problem (with line and field, up to a cap); in each case nothing is written.
    """
    source = (filename or "upload")[:MAX_SOURCE_FILE]
    stream, size = (io.BytesIO(data), len(data)) if file is None else (file, getattr(file, "size", None))
    if size is not None and size > settings.API_MAX_UPLOAD_BYTES:
        raise UploadTooLarge(f"the file has {size:,} bytes; at most {settings.API_MAX_UPLOAD_BYTES:,} are taken")
    track = Track.objects.select_related("collection", "campaign").filter(campaign=campaign).first()
    if track is None:
        raise ImportFailed(
            [Problem(source, None, "campaign", f"campaign {campaign.name!r} takes no runs (it has no topics)")]
        )
    if limit_runs:
        _check_quota(owner, campaign, track)  # before reading a file that could not be stored anyway
    problems = Problems(source)
    batches = upload_batches(stream, source, size)
    if run_format(campaign) == RunFormat.CAR_Y3:
        parsed = parse_article_batches(batches, problems)
    else:
        # A valid run has at most the campaign's topics x the documents a topic may have: reading stops past that,
        # so the columns held stay bounded whatever the file.
        most = track.topics.count() * passages_allowed(track)
        reader = RunReader(problems, stop_after=STOP_AFTER_PROBLEMS, max_rows=most,
                           too_many=f"campaign {campaign.name!r} has {track.topics.count():,} topics of at most "
                                    f"{passages_allowed(track):,} documents")
        parsed = reader.read(batches)
    with transaction.atomic():
        if limit_runs:
            # Lock the owner's row so that two uploads at once cannot both pass the count.
            get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
            _check_quota(owner, campaign, track)
        fields = {"owner": owner, "source": Run.Source.UPLOADED, "track": campaign.name, "source_file": source}
        if run_format(campaign) == RunFormat.CAR_Y3:
            return _store_articles(parsed, problems, track, fields)
        return _store_trec_run(parsed, problems, track, fields)


def _check_quota(owner, campaign, track):
    allowed = runs_allowed(track)
    if Run.objects.filter(owner=owner, track=campaign.name).count() >= allowed:
        raise RunLimitReached(
            f"you have uploaded {allowed} runs to campaign {campaign.name!r}, the most allowed; "
            "delete one that no pool uses to upload another"
        )


def _outside_topics(track, external_ids) -> set[str]:
    """The ids among `external_ids` that are topics of the track's collection but not of the campaign."""
    own = {topic_id(t) for t in track.topics.values_list("external_id", flat=True)}  # a stored `051` is 51
    outside = [t for t in external_ids if t not in own]
    return set(topics_by_id(Topic.objects.filter(collection=track.collection), outside))


def _store_trec_run(parsed, problems, track, fields) -> Run:
    allowed, counts = passages_allowed(track), Counter()
    first_line = parsed.first_lines(parsed.qids)
    for qid, line in zip(parsed.qids, parsed.lines):
        counts[qid] += 1
        if counts[qid] == allowed + 1:
            problems.add(
                f"topic {qid!r} has more than {allowed} documents, the most the track allows", line=line, field="docid"
            )
    for qid in sorted(_outside_topics(track, first_line), key=first_line.__getitem__):
        problems.add(
            f"topic {qid!r} is not a topic of campaign {track.campaign.name!r}", line=first_line[qid], field="qid"
        )
    return import_parsed_run(parsed, problems, track.collection.name, run_fields=fields).run


def _store_articles(articles, problems, track, fields) -> Run:
    allowed = passages_allowed(track)
    outside = _outside_topics(track, {a.squid for a in articles})
    for article in articles:
        if article.squid in outside:
            article.add(f"topic {article.squid!r} is not a topic of campaign {track.campaign.name!r}", "squid")
        if len(article.paragraphs) > allowed:
            article.add(
                f"{len(article.paragraphs)} paragraphs: the track allows at most {allowed} a page", "paragraphs"
            )
    import_articles(
        articles, [problems], track.collection.name, create_topics=False, create_passages=False, extend_runs=False,
        run_fields=fields,
    )
    scope = {"owner": fields["owner"], "track": fields["track"]}
    return name_scope(track.collection, **scope).get(name=articles[0].run_id)


def delete_run(run) -> None:
    """Delete a run no pool and no assignment uses yet; RunInUse otherwise."""
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        if run.pools.exists() or CandidateSource.objects.filter(run=run).exists():
            raise RunInUse(f"run {run.name!r} is in a pool, so it can no longer be deleted")
        if run.assignments.exists():
            raise RunInUse(f"run {run.name!r} is being judged, so it can no longer be deleted")
        run.delete()
