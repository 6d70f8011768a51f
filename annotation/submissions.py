"""Runs uploaded by participants: checked whole with the importers' own rules, stored only when clean.

The campaign's task decides the format: outline campaigns take TREC CAR Y3 submissions (one page per
JSON line; the importer holds `tqa2:` pages to the Y3 rules), plot and ad hoc campaigns TREC
six-column runs. On top of the importers' checks an upload must name only the campaign's topics and
documents the collection already has (an upload never adds passages or topics), give a topic at
most the track's number of passages, and use a run name the collection does not have yet. The run
is stored with its owner, source UPLOADED and track = the campaign's name.
"""

import gzip
import io
import zlib
from collections import Counter

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Campaign, Track
from assessments.importers.car import Y3_MAX_PARAGRAPHS, import_articles, parse_articles
from assessments.importers.trec import ids_by_external_id, import_parsed_run, parse_run
from assessments.models import CandidateSource, Run, Topic
from retrieval.ingest import ImportFailed, Problem, Problems, decode_text

GZIP_MAGIC = b"\x1f\x8b"
TREC_MAX_PER_TOPIC = 1000  # TREC's usual depth for submitted runs
MAX_SOURCE_FILE = 500  # Run.source_file


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
    return RunFormat.CAR_Y3 if campaign.task == Campaign.Task.OUTLINE else RunFormat.TREC


def runs_allowed(track) -> int:
    """Runs one participant may upload to the track's campaign."""
    return track.max_runs if track.max_runs is not None else settings.API_MAX_RUNS_PER_PARTICIPANT


def passages_allowed(track) -> int:
    """Passages a run may give one topic of the track."""
    if track.max_per_topic is not None:
        return track.max_per_topic
    return Y3_MAX_PARAGRAPHS if track.campaign.task == Campaign.Task.OUTLINE else TREC_MAX_PER_TOPIC


def decode_upload(data: bytes, source: str) -> str:
    """The text of an uploaded file (see retrieval.ingest.decode_text), gunzipped at most once and only up to
    API_MAX_UNCOMPRESSED_BYTES, so a small compressed bomb cannot fill the memory."""
    if len(data) > settings.API_MAX_UPLOAD_BYTES:
        raise UploadTooLarge(f"the file has {len(data):,} bytes; at most {settings.API_MAX_UPLOAD_BYTES:,} are taken")
    if data[:2] == GZIP_MAGIC:
        limit = settings.API_MAX_UNCOMPRESSED_BYTES
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
                plain = stream.read(limit + 1)
        except (OSError, EOFError, zlib.error):
            plain = None  # broken: decode_text says how
        if plain is not None:
            if len(plain) > limit:
                raise UploadTooLarge(f"the file unpacks to more than {limit:,} bytes, the most that is taken")
            if plain[:2] == GZIP_MAGIC:
                raise ImportFailed([Problem(source, None, None, "the file is gzip inside gzip: compress it once")])
            data = plain
    return decode_text(data, source)


def upload_run(*, campaign, owner, data: bytes, filename: str = "", limit_runs: bool = True) -> Run:
    """Check an uploaded run file whole and store it as `owner`'s run of `campaign`.

    Raises UploadTooLarge, RunLimitReached (when `limit_runs`, the participants' quota), or ImportFailed
    listing every problem (with line and field, up to a cap); in each case nothing is written.
    """
    source = (filename or "upload")[:MAX_SOURCE_FILE]
    text = decode_upload(data, source)
    with transaction.atomic():
        track = Track.objects.select_related("collection", "campaign").filter(campaign=campaign).first()
        if track is None:
            raise ImportFailed(
                [Problem(source, None, "campaign", f"campaign {campaign.name!r} takes no runs (it has no topics)")]
            )
        if limit_runs:
            # Lock the owner's row so that two uploads at once cannot both pass the count.
            get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
            allowed = runs_allowed(track)
            if Run.objects.filter(owner=owner, track=campaign.name).count() >= allowed:
                raise RunLimitReached(
                    f"you have uploaded {allowed} runs to campaign {campaign.name!r}, the most allowed; "
                    "delete one that no pool uses to upload another"
                )
        fields = {"owner": owner, "source": Run.Source.UPLOADED, "track": campaign.name, "source_file": source}
        if run_format(campaign) == RunFormat.CAR_Y3:
            return _store_articles(text, source, track, fields)
        return _store_trec_run(text, source, track, fields)


def _outside_topics(track, external_ids) -> set[str]:
    """The ids among `external_ids` that are topics of the track's collection but not of the campaign."""
    own = set(track.topics.values_list("external_id", flat=True))
    outside = [t for t in external_ids if t not in own]
    return set(ids_by_external_id(Topic.objects.filter(collection=track.collection), outside))


def _store_trec_run(text, source, track, fields) -> Run:
    problems = Problems(source)
    rows, tags = parse_run(text, problems)
    allowed, counts, first_line = passages_allowed(track), Counter(), {}
    for row in rows:
        first_line.setdefault(row.qid, row.line)
        counts[row.qid] += 1
        if counts[row.qid] == allowed + 1:
            problems.add(
                f"topic {row.qid!r} has more than {allowed} documents, the most the track allows",
                line=row.line, field="docid",
            )
    for qid in _outside_topics(track, first_line):
        problems.add(
            f"topic {qid!r} is not a topic of campaign {track.campaign.name!r}", line=first_line[qid], field="qid"
        )
    return import_parsed_run(rows, tags, problems, track.collection.name, run_fields=fields).run


def _store_articles(text, source, track, fields) -> Run:
    problems = Problems(source)
    articles = parse_articles(text, problems)
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
    return Run.objects.get(collection=track.collection, name=articles[0].run_id)


def delete_run(run) -> None:
    """Delete a run no pool and no assignment uses yet; RunInUse otherwise."""
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        if run.pools.exists() or CandidateSource.objects.filter(run=run).exists():
            raise RunInUse(f"run {run.name!r} is in a pool, so it can no longer be deleted")
        if run.assignments.exists():
            raise RunInUse(f"run {run.name!r} is being judged, so it can no longer be deleted")
        run.delete()
