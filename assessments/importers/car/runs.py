"""TREC CAR Y3 runs: submitted articles (one page per JSON line, or the trial data's single-page files) become runs.

A page's paragraphs in order are the article, so the stored rank is the position in the article. Pages whose
squid starts with `tqa2:` are held to the Y3 submission rules; trial pages are taken as they are, except that a
paragraph repeated within a trial page is kept once, at its first place.
"""

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.db import IntegrityError, transaction

from assessments.importers.trec import (
    bulk_insert,
    check_slug,
    ids_by_external_id,
    no_progress,
    raise_if_any,
    refused,
)
from assessments.importers.sniff import but_looks_like
from assessments.models import Facet, Run, RunEntry, Topic
from assessments.services.runs import name_scope, name_taken_message, taken_names
from retrieval.ingest import (
    ImportFailed, InvalidJSON, Problems, id_problem, json_type, load_json, parse_json_lines, read_text,
)
from retrieval.models import Collection, Passage

from assessments.importers.car.common import (
    DEFAULT_COLLECTION, LOOKUP_CHUNK, MAX_EXTERNAL_ID, MAX_HEADING, MAX_HEADING_ID, MAX_RUN_NAME, MAX_TITLE, check_text,
    find_collection, merge_failure, short,
)


# --- runs (articles): parsing ---------------------------------------------------------------------------------

PARA_ID = re.compile(r"[0-9a-f]{40}\Z")
Y3_RUN_ID = re.compile(r"[A-Za-z0-9_.-]{1,15}\Z")
Y3_HEADING_ID = re.compile(r"(tqa2:L_[0-9]+)/T_[0-9]+\Z")
Y3_PREFIX = "tqa2:"
Y3_MAX_PARAGRAPHS = 20


@dataclass
class Paragraph:
    para_id: str
    text: str | None  # None: no para_body, the passage must exist already
    index: int  # place in the file's paragraphs list, for messages
    origin: dict = field(default_factory=dict)  # the paragraph's paragraph_origins entry
    score: float | None = None


@dataclass
class Article:
    """One page of a submission: a run's article for one topic."""

    problems: Problems  # the collector of the file the page is in
    source: str
    line: int
    squid: str
    title: str
    run_id: str
    facets: list  # [(heading_id, heading)] from query_facets
    paragraphs: list
    strict: bool  # held to the Y3 rules (squid tqa2:...)
    repeats: int = 0  # repeated paragraphs dropped (trial pages only)

    def add(self, message, field=None):
        self.problems.add(message, line=self.line, field=field)


CAR_RUN = "a CAR run (Y3 JSON lines)"  # as assessments.importers.sniff names them


def json_records(text, problems):
    """(line, object) of a file that is one JSON object (the trial pages, maybe pretty-printed) or JSON lines."""
    try:
        whole = load_json(text)
    except InvalidJSON as exc:
        error = exc
    else:
        first_line = text[: len(text) - len(text.lstrip())].count("\n")  # blank lines before the object
        wrong = but_looks_like(text, CAR_RUN)
        if isinstance(whole, dict) and not wrong:
            yield first_line + 1, whole
        else:
            what = "not a run's page" if isinstance(whole, dict) else f"got {json_type(whole)}"
            problems.add(f"expected a JSON object (one page) or JSON lines, {what}{wrong}", line=first_line + 1)
        return
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    first = lines[0] if lines else ""
    try:
        load_json(first)
        first_is_json = True
    except InvalidJSON:
        first_is_json = False
    if first_is_json or (first.startswith("{") and first.endswith("}")):
        yield from parse_json_lines(text, problems)
    else:
        # Neither one object nor JSON lines: most likely a broken (e.g. truncated) single page, or another kind.
        problems.add(error.message + but_looks_like(text, CAR_RUN), line=error.line)


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_article(obj, line, source, problems) -> Article | None:
    """One page of a submission, checked; None when it has problems (all added to `problems`)."""
    before = problems.total

    def add(message, field=None):
        problems.add(message, line=line, field=field)

    squid = obj.get("squid")
    if "squid" not in obj:
        add("missing key 'squid'")
    else:
        check_text(squid, problems, line=line, field="squid", limit=MAX_EXTERNAL_ID)
    strict = isinstance(squid, str) and squid.startswith(Y3_PREFIX)

    run_id = obj.get("run_id")
    if "run_id" not in obj:
        add("missing key 'run_id'")
    elif check_text(run_id, problems, line=line, field="run_id", limit=MAX_RUN_NAME):
        if strict and not Y3_RUN_ID.match(run_id):
            add(f"{short(run_id)} is not a Y3 run id (at most 15 characters of A-Z a-z 0-9 _ . -)", "run_id")
        elif run_id != run_id.strip():
            add(f"{short(run_id)} has leading or trailing spaces", "run_id")
        elif id_problem(run_id):
            add(f"{short(run_id)}: {id_problem(run_id)}", "run_id")

    title = obj.get("title")
    if "title" not in obj:
        add("missing key 'title'")
    else:
        check_text(title, problems, line=line, field="title", limit=MAX_TITLE, required=False)

    facets = []
    query_facets = obj.get("query_facets")
    if "query_facets" not in obj:
        add("missing key 'query_facets'")
    elif not isinstance(query_facets, list):
        add(f"expected a list, got {json_type(query_facets)}", "query_facets")
    else:
        seen = {}
        for index, facet in enumerate(query_facets):
            place = f"query_facets[{index}]"
            if not isinstance(facet, dict):
                add(f"expected an object, got {json_type(facet)}", place)
                continue
            heading_id, heading = facet.get("heading_id"), facet.get("heading")
            ok = check_text(heading_id, problems, line=line, field=f"{place}.heading_id", limit=MAX_HEADING_ID)
            ok &= check_text(heading, problems, line=line, field=f"{place}.heading", limit=MAX_HEADING)
            if not ok:
                continue
            if strict:
                match = Y3_HEADING_ID.match(heading_id)
                if not match:
                    add(f"{short(heading_id)} is not of the form tqa2:L_xxxx/T_yyyy", f"{place}.heading_id")
                    continue
                if isinstance(squid, str) and match.group(1) != squid:
                    add(f"{short(heading_id)} is a section of another page than {squid!r}", f"{place}.heading_id")
                    continue
            if heading_id in seen:
                add(f"{heading_id!r} is also query_facets[{seen[heading_id]}]", f"{place}.heading_id")
                continue
            seen[heading_id] = index
            facets.append((heading_id, heading))

    paragraphs, by_id, repeats = [], {}, 0
    items = obj.get("paragraphs")
    if "paragraphs" not in obj:
        add("missing key 'paragraphs'")
    elif not isinstance(items, list):
        add(f"expected a list, got {json_type(items)}", "paragraphs")
    elif not items:
        add("the article has no paragraphs", "paragraphs")
    else:
        if strict and len(items) > Y3_MAX_PARAGRAPHS:
            add(f"{len(items)} paragraphs: a Y3 article has at most {Y3_MAX_PARAGRAPHS}", "paragraphs")
        for index, item in enumerate(items):
            place = f"paragraphs[{index}]"
            if not isinstance(item, dict):
                add(f"expected an object, got {json_type(item)}", place)
                continue
            para_id = item.get("para_id")
            if not isinstance(para_id, str):
                add(f"expected a string, got {json_type(para_id)}", f"{place}.para_id")
                continue
            if not PARA_ID.match(para_id):
                add(f"{short(para_id)} is not 40 hexadecimal characters (0-9, a-f)", f"{place}.para_id")
                continue
            text = None
            body = item.get("para_body")
            if body is not None:
                if not isinstance(body, list):
                    add(f"expected a list, got {json_type(body)}", f"{place}.para_body")
                    continue
                if not body:
                    add("is empty", f"{place}.para_body")
                    continue
                pieces = []
                for k, element in enumerate(body):
                    if not isinstance(element, dict):
                        add(f"expected an object, got {json_type(element)}", f"{place}.para_body[{k}]")
                    elif not isinstance(element.get("text"), str):
                        add(f"expected a string, got {json_type(element.get('text'))}", f"{place}.para_body[{k}].text")
                    else:
                        pieces.append(element["text"])
                if len(pieces) != len(body):
                    continue
                text = "".join(pieces)
            if para_id in by_id:
                first = by_id[para_id]
                if strict:
                    add(f"{para_id!r} is also paragraphs[{first.index}]: a paragraph appears once in an article",
                        f"{place}.para_id")
                elif text is not None and first.text is not None and text != first.text:
                    add(f"{para_id!r} is also paragraphs[{first.index}], with a different text", f"{place}.para_body")
                else:
                    repeats += 1  # the trial pages repeat paragraphs; keep the first place
                    if first.text is None:
                        first.text = text
                continue
            paragraph = Paragraph(para_id, text, index)
            by_id[para_id] = paragraph
            paragraphs.append(paragraph)

    origins = obj.get("paragraph_origins")
    if origins is not None:
        if not isinstance(origins, list):
            add(f"expected a list, got {json_type(origins)}", "paragraph_origins")
        else:
            placed = {}
            for index, origin in enumerate(origins):
                place = f"paragraph_origins[{index}]"
                if not isinstance(origin, dict):
                    add(f"expected an object, got {json_type(origin)}", place)
                    continue
                para_id = origin.get("para_id")
                if not isinstance(para_id, str):
                    add(f"expected a string, got {json_type(para_id)}", f"{place}.para_id")
                    continue
                ok = True
                if "rank_score" in origin and not is_number(origin["rank_score"]):
                    add(f"expected a finite number, got {short(origin['rank_score'])}", f"{place}.rank_score")
                    ok = False
                rank = origin.get("rank")
                if "rank" in origin and (not isinstance(rank, int) or isinstance(rank, bool)):
                    add(f"expected an integer, got {short(rank)}", f"{place}.rank")
                    ok = False
                if "section_path" in origin and not isinstance(origin["section_path"], str):
                    add(f"expected a string, got {json_type(origin['section_path'])}", f"{place}.section_path")
                    ok = False
                if para_id in placed:
                    add(f"{short(para_id)} is also paragraph_origins[{placed[para_id]}]", f"{place}.para_id")
                    continue
                placed[para_id] = index
                if para_id not in by_id:
                    add(f"{short(para_id)} is not a paragraph of the article", f"{place}.para_id")
                    continue
                if ok:
                    by_id[para_id].origin = origin
                    if "rank_score" in origin:
                        by_id[para_id].score = float(origin["rank_score"])

    if problems.total > before:
        return None
    return Article(problems, source, line, squid, title, run_id, facets, paragraphs, strict, repeats)


def read_articles(path, problems, progress=no_progress) -> list[Article]:
    """The checked pages of one submission file (problems go to `problems`); one file holds one run."""
    try:
        text = read_text(path)
    except ImportFailed as exc:
        merge_failure(exc, problems)
        return []
    return parse_articles(text, problems, progress)


def parse_articles(text, problems, progress=no_progress) -> list[Article]:
    """The checked pages of one submission's text (problems go to `problems`); one submission holds one run."""
    return articles_of(json_records(text, problems), problems, progress)


def parse_article_batches(batches, problems, progress=no_progress) -> list[Article]:
    """parse_articles of a stream of (first line, text) blocks (retrieval.ingest.text_batches), read block by
    block when the file is JSON lines (its first line is a JSON object, as Y3 submissions are); a file that is
    one JSON object over several lines (the older trial pages) is read whole, as parse_articles reads it."""

    def records():
        batches_left = iter(batches)
        head = []
        for first, text in batches_left:
            head.append(text)
            first_line = next((line.strip() for line in text.split("\n") if line.strip()), None)
            if first_line is not None:
                break
        else:
            first_line = None
        try:
            lines_mode = isinstance(load_json(first_line), dict) if first_line is not None else False
        except InvalidJSON:
            lines_mode = False
        if not lines_mode:
            yield from json_records("\n".join(head + [text for _, text in batches_left]), problems)
            return
        number = 1
        for text in head:
            yield from parse_json_lines(text, problems, number)
            number += text.count("\n") + 1
        for first, text in batches_left:
            yield from parse_json_lines(text, problems, first)

    return articles_of(records(), problems, progress)


def articles_of(records, problems, progress=no_progress) -> list[Article]:
    """The checked pages of (line, object) records of one submission; one submission holds one run."""
    source = problems.source
    articles, run_line = [], {}
    for line, obj in progress(records, desc=Path(source).name, unit="page"):
        run_id = obj.get("run_id")
        if isinstance(run_id, str) and run_id.strip():
            if run_line and run_id not in run_line:
                first_id, first_line = next(iter(run_line.items()))
                problems.add(
                    f"run_id {short(run_id)} differs from {first_id!r} (line {first_line}): a file holds one run",
                    line=line, field="run_id",
                )
            run_line.setdefault(run_id, line)
        article = parse_article(obj, line, source, problems)
        if article is not None:
            articles.append(article)
    if not articles and not problems:
        problems.add("no pages in the file")
    return articles


# --- runs (articles): checking against the database and writing ------------------------------------------------


@dataclass
class RunsImport:
    collection: str
    files: int
    articles: int
    entries: int
    runs: int
    new_runs: int
    new_passages: int
    new_topics: int
    repeats: int

    def summary(self):
        note = f"; {self.repeats:,} repeated paragraphs of trial pages kept once" if self.repeats else ""
        return (
            f"{self.articles:,} articles from {self.files:,} files imported into collection {self.collection!r}: "
            f"{self.entries:,} run entries in {self.runs:,} runs ({self.new_runs:,} new), "
            f"{self.new_passages:,} new passages, {self.new_topics:,} new topics{note}."
        )


def passage_texts(collection, para_ids) -> dict[str, str]:
    """external id → text of the passages of `collection` among `para_ids` (batched lookups)."""
    ids, found = list(para_ids), {}
    for start in range(0, len(ids), LOOKUP_CHUNK):
        chunk = ids[start : start + LOOKUP_CHUNK]
        passages = Passage.objects.filter(collection=collection, external_id__in=chunk)
        found.update(passages.values_list("external_id", "text"))
    return found


def check_articles(
    articles, collection, collection_name, create_topics, *, create_passages=True, extend_runs=True, scope=None
):
    """Cross-page and database checks; returns (new topics {squid: article}, passages to create {id: text}).

    Without `create_passages` a paragraph the collection lacks is an unknown document even with a para_body;
    without `extend_runs` a run_id that already names a run of the collection is a problem. Run names are
    looked up among the runs of `scope` ({owner, track}: assessments.services.runs.name_scope; the
    organisers' own runs by default), never among other teams'.
    """
    # One article per run and topic, and one text per paragraph id, across all files.
    first_article, bodies = {}, {}
    for article in articles:
        key = (article.run_id, article.squid)
        if key in first_article:
            other = first_article[key]
            article.add(
                f"run {article.run_id!r} has a second article for topic {article.squid!r} "
                f"(first at {other.source}:{other.line})",
                "squid",
            )
        first_article.setdefault(key, article)
        for paragraph in article.paragraphs:
            if paragraph.text is None:
                continue
            if paragraph.para_id in bodies:
                text, other, index = bodies[paragraph.para_id]
                if text != paragraph.text:
                    article.add(
                        f"the text of {paragraph.para_id!r} differs from its text at {other.source}:{other.line} "
                        f"paragraphs[{index}]",
                        f"paragraphs[{paragraph.index}].para_body",
                    )
                continue
            bodies[paragraph.para_id] = (paragraph.text, article, paragraph.index)

    # Topics.
    squids = list(dict.fromkeys(a.squid for a in articles))
    known = set()
    if collection is not None:
        known = set(ids_by_external_id(Topic.objects.filter(collection=collection), squids))
    new_topics = {}
    for article in articles:
        if article.squid in known:
            continue
        if create_topics:
            new_topics.setdefault(article.squid, article)
        else:
            article.add(
                f"unknown topic {article.squid!r} in collection {collection_name!r} "
                "(import its outline first, or use --create-topics)",
                "squid",
            )

    # Passages: a given text must match the stored one; a paragraph without text must be known.
    stored = {} if collection is None else passage_texts(
        collection, {p.para_id for a in articles for p in a.paragraphs}
    )
    reported = set()
    for article in articles:
        for paragraph in article.paragraphs:
            pid, place = paragraph.para_id, f"paragraphs[{paragraph.index}]"
            if paragraph.text is not None:
                if pid not in stored:
                    if not create_passages:
                        article.add(
                            f"unknown document {pid!r}: collection {collection_name!r} has no such passage",
                            f"{place}.para_id",
                        )
                elif stored[pid] != paragraph.text and pid not in reported:
                    reported.add(pid)
                    article.add(
                        f"passage {pid!r} already exists in collection {collection_name!r} with a different text",
                        f"{place}.para_body",
                    )
            elif pid not in stored and pid not in bodies:
                article.add(
                    f"unknown document {pid!r}: no para_body, and collection {collection_name!r} has no such passage",
                    f"{place}.para_id",
                )
    new_passages = {pid: text for pid, (text, _, _) in bodies.items() if pid not in stored}

    # Runs already holding an article for a topic (or, without extend_runs, runs that exist at all).
    scope = scope or {}
    if collection is not None and not extend_runs:
        existing = taken_names(collection, {a.run_id for a in articles}, **scope)
        for article in articles:
            if article.run_id in existing:
                existing.discard(article.run_id)  # said once per run
                article.add(name_taken_message(collection, article.run_id, **scope), "run_id")
    elif collection is not None:
        run_ids = {a.run_id for a in articles}
        taken = set(
            RunEntry.objects.filter(run__in=name_scope(collection, **scope), run__name__in=run_ids,
                                    topic__external_id__in=squids)
            .values_list("run__name", "topic__external_id")
            .distinct()
        )
        for article in articles:
            if (article.run_id, article.squid) in taken:
                article.add(f"run {article.run_id!r} already has an article for topic {article.squid!r}", "run_id")
    return new_topics, new_passages


def import_car_runs(
    paths, collection_name=DEFAULT_COLLECTION, *, create_topics=False, progress=no_progress
) -> RunsImport:
    """Import CAR Y3 submission files (and the older single-page files) together; ImportFailed if anything is wrong."""
    collectors, articles = [], []
    for path in paths:
        problems = Problems(str(path))
        collectors.append(problems)
        articles.extend(read_articles(path, problems, progress))
    return import_articles(articles, collectors, collection_name, create_topics=create_topics, progress=progress)


def _scope(run_fields):
    """The name scope (owner, track) of the runs that `run_fields` make."""
    return {"owner": (run_fields or {}).get("owner"), "track": (run_fields or {}).get("track", "")}


def import_articles(
    articles, collectors, collection_name=DEFAULT_COLLECTION, *, create_topics=False, create_passages=True,
    extend_runs=True, run_fields=None, progress=no_progress,
) -> RunsImport:
    """Check parsed pages together and against the database, then write them, in one transaction.

    `collectors` are the Problems of the parsed inputs (a caller may have added its own checks to them); if
    any holds anything, or these checks find anything, ImportFailed lists it all and nothing is written.
    `create_passages` and `extend_runs` are as in check_articles; `run_fields` are further fields of the
    runs created (owner, source, track, source_file); the source defaults to IMPORTED.
    """
    general = Problems(f"--collection {collection_name}")
    check_slug(collection_name, "collection name", general, field=None)

    try:
        with transaction.atomic():
            # The well-formed pages are checked against each other and the database even when other pages
            # had problems, so that one rejection lists everything.
            collection = find_collection(collection_name, general)
            new_topics, new_passages = check_articles(
                articles, collection, collection_name, create_topics,
                create_passages=create_passages, extend_runs=extend_runs, scope=_scope(run_fields),
            )
            raise_if_any(general, *collectors)

            if collection is None:
                collection = Collection.objects.create(name=collection_name, kind=Collection.Kind.PASSAGES)
            bulk_insert(
                Topic,
                [
                    Topic(collection=collection, external_id=squid, kind=Topic.Kind.OUTLINE, title=article.title)
                    for squid, article in new_topics.items()
                ],
                progress, "topics",
            )
            topic_ids = ids_by_external_id(
                Topic.objects.filter(collection=collection), list(dict.fromkeys(a.squid for a in articles))
            )
            bulk_insert(
                Facet,
                [
                    Facet(topic_id=topic_ids[squid], heading_id=heading_id, heading=heading, position=position)
                    for squid, article in new_topics.items()
                    for position, (heading_id, heading) in enumerate(article.facets, start=1)
                ],
                progress, "facets",
            )
            bulk_insert(
                Passage,
                [Passage(collection=collection, external_id=pid, text=text) for pid, text in new_passages.items()],
                progress, "passages",
            )
            passage_ids = ids_by_external_id(
                Passage.objects.filter(collection=collection), {p.para_id for a in articles for p in a.paragraphs}
            )
            runs, new_runs = {}, 0
            for article in articles:
                if article.run_id in runs:
                    continue
                run = None
                if extend_runs:
                    run = name_scope(collection, **_scope(run_fields)).filter(name=article.run_id).first()
                if run is None:
                    fields = {"source": Run.Source.IMPORTED, "source_file": article.source, **(run_fields or {})}
                    run = Run.objects.create(collection=collection, name=article.run_id, **fields)
                    new_runs += 1
                runs[article.run_id] = run
            entries = [
                RunEntry(
                    run=runs[article.run_id], topic_id=topic_ids[article.squid],
                    passage_id=passage_ids[paragraph.para_id], rank=rank, score=paragraph.score,
                    origin=paragraph.origin,
                )
                for article in articles
                for rank, paragraph in enumerate(article.paragraphs, start=1)
            ]
            bulk_insert(RunEntry, entries, progress, "run entries")
    except IntegrityError as exc:
        raise refused(", ".join(c.source for c in collectors), exc) from exc
    return RunsImport(
        collection=collection_name,
        files=len(collectors),
        articles=len(articles),
        entries=len(entries),
        runs=len(runs),
        new_runs=new_runs,
        new_passages=len(new_passages),
        new_topics=len(new_topics),
        repeats=sum(a.repeats for a in articles),
    )
