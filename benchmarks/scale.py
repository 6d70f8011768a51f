"""Pages and exports as the data grows: the same pages at 10K, 100K (and 1M) judgements, each against its 10K figure.

    .venv/bin/python benchmarks/scale.py [--sizes 10000 100000 1000000] [--repeat 5]
        [--pg postgres://postgres@127.0.0.1:5432] [--database pj_scale] [--keep]

Makes a fresh PostgreSQL database (dropped first; dropped after unless --keep), migrates it, and fills it round
by round, each round a campaign like a real one: ROUND_TOPICS outline topics with ROUND_FACETS facets, two runs
whose articles have ARTICLE_LENGTH passages each, ROUND_ASSESSORS assessors each judging every article of the
round (facets on every passage, a removal on some, notes on some, the transitions between neighbours), every
judgement with the change that made it (source web, the run it was made under, a session), written by COPY. The
sizes are reached one after the other (100K adds rounds to the 10K database). The measured campaign is the first
round, its first assessor and the organiser: the history around it grows (more rounds, campaigns, assessors,
judgements), the work in front of them does not.

For each size, in-process (Django's test client, the real middleware, PostgreSQL): the assessor's queue, a judging
page (a 20-passage article), the campaign dashboard, adjudication, the review queue and a review, the data browser
(its first page, filtered by an assessor and disagreement, a second page by cursor, an item), the API's lists
(campaigns and runs: their first page of the default size, which grows from a few rows to 100 with the
data, and their first and last pages of 5, the last reached by its cursor; a campaign's topics), and
the exports: export_qrels of the whole collection (every round), the Y3 JSON (the API's zip of the first round's
topics), plot labels and the audit log of the first round (streamed downloads, read to the end). Prints the median time of --repeat runs, the statements each sends, the peak of
Python memory allocated while it runs (tracemalloc, a separate run), and the ratio of the time to the first
size's. Each round's campaign keeps its size; the pages that read a whole campaign are measured on one that grows
too ("all rounds: …"): every round's labels copied into one campaign (ALL_ROUNDS, with the rounds' topics and
units), dropped after measuring: the data browser filtered by disagreement alone, and adjudication. Not part of
the test suite.
"""

import argparse
import io
import json
import os
import random
import secrets
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROUND_TOPICS = 10
ROUND_FACETS = 6
ROUND_ASSESSORS = 5
ARTICLE_LENGTH = 20
RUNS = ("guir", "unh")
PASSAGES_PER_TOPIC = 30  # the two runs' articles share some passages
ALL_ROUNDS = "all-rounds"  # the campaign of every round's labels, made and dropped at each size
QRELS_OUT = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"scale-{os.getpid()}.qrels")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="Judgements, ascending.")
    parser.add_argument("--repeat", type=int, default=5, help="Runs of each page (the median is printed).")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="PostgreSQL server (no database).")
    parser.add_argument("--database", default="pj_scale", help="Database to create (dropped first).")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14", help="The shared cache (sessions, save path).")
    parser.add_argument("--keep", action="store_true", help="Keep the database afterwards.")
    parser.add_argument("--fill-only", action="store_true",
                        help="Fill an existing, migrated database to the largest size and stop (bench_load.py --fill).")
    args = parser.parse_args(argv)

    if not args.fill_only:
        recreate_database(args.pg, args.database)
    # Production mode, as gunicorn serves it: DEBUG off, sessions and the save path's caches on Redis.
    os.environ.update(DATABASE_URL=f"{args.pg}/{args.database}", DJANGO_SETTINGS_MODULE="config.settings",
                      DJANGO_DEBUG="0", DJANGO_SECRET_KEY=secrets.token_urlsafe(50), DJANGO_ALLOWED_HOSTS="testserver",
                      CACHE_URL=args.redis, CACHE_KEY_PREFIX=f"scale-{secrets.token_hex(4)}",
                      DJANGO_STATIC_ROOT=tempfile.mkdtemp(prefix="scale-static-"))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    if args.fill_only:
        started = time.perf_counter()
        made = fill_to(max(args.sizes))
        print(f"filled: {made:,} judgements in {time.perf_counter() - started:.0f} s", flush=True)
        return 0
    call_command("migrate", verbosity=0)
    call_command("collectstatic", "--noinput", verbosity=0)  # production mode serves the hashed names
    first = None
    try:
        for size in sorted(args.sizes):
            started = time.perf_counter()
            made = fill_to(size)
            print(f"\n== {made:,} judgements (filled in {time.perf_counter() - started:.0f} s)", flush=True)
            results = measure_all(args.repeat)
            results.update(measure_all_rounds(args.repeat))
            first = first or results
            report(results, first)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            drop_database(args.pg, args.database)


def recreate_database(server, name):
    import psycopg
    from psycopg import sql

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(server, name):
    import psycopg
    from psycopg import sql

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


# Filling ----------------------------------------------------------------------------------------------------------


def fill_to(total) -> int:
    """Add rounds until the database holds at least `total` judgements; returns how many it holds."""
    from annotation.models import Campaign
    from assessments.models import Judgement

    made = Judgement.objects.count()
    while made < total:
        made += add_round(Campaign.objects.filter(name__startswith="round-").count())
    analyse()
    return made


def add_round(n) -> int:
    """One campaign (round n) judged in full by its assessors; returns the judgements it added."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from annotation.models import Assignment, Campaign, CampaignTopic, Track
    from assessments.models import Facet, Judgement, JudgementChange, Run, RunEntry, Topic
    from assessments.models.judgements import RELEVANCE_GRADE
    from retrieval.models import Collection, Passage

    rng = random.Random(n)
    User = get_user_model()
    with transaction.atomic():
        collection, _ = Collection.objects.get_or_create(name="scale", defaults={"kind": Collection.Kind.PASSAGES})
        if not User.objects.filter(username="organiser").exists():
            User.objects.create_superuser("organiser", "organiser@example.org", secrets.token_urlsafe(16))
        campaign = Campaign.objects.create(name=f"round-{n:04d}", task=Campaign.Task.OUTLINE, review_sample_size=5)
        topics = Topic.objects.bulk_create(
            Topic(collection=collection, external_id=f"tqa2:L_{n:04d}{t:03d}", kind=Topic.Kind.OUTLINE, title=f"T{t}")
            for t in range(ROUND_TOPICS))
        CampaignTopic.objects.bulk_create(CampaignTopic(campaign=campaign, topic=t) for t in topics)
        Track.objects.create(campaign=campaign, collection=collection).topics.set(topics)  # the API's topic list
        headings = {t.pk: [f"{t.external_id}/T_{h}" for h in range(ROUND_FACETS)] for t in topics}
        Facet.objects.bulk_create(Facet(topic_id=tid, heading_id=h, heading=f"heading {i}", position=i + 1)
                                  for tid, hs in headings.items() for i, h in enumerate(hs))
        passages = Passage.objects.bulk_create(
            Passage(collection=collection, external_id=uuid.UUID(int=rng.getrandbits(128)).hex + f"{n:08x}",
                    text="A passage of the scale benchmark. " * 8)
            for _ in range(ROUND_TOPICS * PASSAGES_PER_TOPIC))
        runs = [Run.objects.create(collection=collection, name=f"{name}-{n:04d}") for name in RUNS]
        articles = {}  # (run, topic) -> passage ids in order
        entries = []
        for i, topic in enumerate(topics):
            mine = [p.pk for p in passages[i * PASSAGES_PER_TOPIC:(i + 1) * PASSAGES_PER_TOPIC]]
            for r, run in enumerate(runs):
                article = mine[r * 10:r * 10 + ARTICLE_LENGTH]
                articles[run, topic] = article
                entries += [RunEntry(run=run, topic=topic, passage_id=pid, rank=k, score=1.0 / k)
                            for k, pid in enumerate(article, start=1)]
        RunEntry.objects.bulk_create(entries)
        users = User.objects.bulk_create(User(username=f"a{n:04d}-{u}") for u in range(ROUND_ASSESSORS))
        Assignment.objects.bulk_create(
            Assignment(campaign=campaign, assessor=user, topic=topic, run=run, kind=Assignment.Kind.OUTLINE,
                       status=Assignment.Status.DONE, position=k, token=uuid.uuid4().hex, seed=k + 1)
            for user in users for k, (run, topic) in enumerate(articles))
        # Leave the first assessor's first two units open (a queue with work in it, a page to judge).
        Assignment.objects.filter(assessor=users[0], position__lt=2).update(status=Assignment.Status.IN_PROGRESS)

        with connection.cursor() as cursor:
            cursor.execute("SELECT COALESCE(MAX(id), 0) FROM assessments_judgement")
            next_id = cursor.fetchone()[0] + 1
        start = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=n)
        judgements, changes = [], []
        for user in users:
            session = f"s-{user.pk}"
            for topic in topics:
                done = set()
                for run in runs:
                    article = articles[run, topic]
                    for k, pid in enumerate(article):
                        rows = []
                        if pid not in done:
                            done.add(pid)
                            facets = rng.sample(headings[topic.pk], rng.choice((1, 1, 2)))
                            value = [{"facet": f, "relevance": rng.choice(("must", "should", "can"))} for f in facets]
                            rows.append(("facet", pid, None, value, max(RELEVANCE_GRADE[v["relevance"]] for v in value)))
                            if rng.random() < 0.1:
                                rows.append(("removal", pid, None, True, 0))
                            if rng.random() < 0.2:
                                rows.append(("notes", pid, None, "mentions the facet", None))
                        if k and (article[k - 1], pid) not in done:
                            done.add((article[k - 1], pid))
                            rows.append(("transition", article[k - 1], pid, rng.choice(("same", "coherent", "switch")), None))
                        for layer, p1, p2, value, grade in rows:
                            jid = next_id + len(judgements)
                            moment = start + timedelta(seconds=len(judgements), microseconds=rng.randrange(1, 10**6))
                            key = Judgement.make_key(layer, topic.pk, p1, p2, "", campaign.pk)
                            text = json.dumps(value)
                            judgements.append((jid, user.pk, layer, topic.pk, p1, p2, "", campaign.pk, key, text, grade,
                                               json.dumps([run.name]), False, jid, moment, 0, moment))
                            changes.append((jid, uuid.uuid4(), jid, user.pk, layer, text, moment, 0, moment, session,
                                            json.dumps([run.name]), "web", rng.randrange(500, 20000), None))
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            copy(cursor, "assessments_judgement",
                 ("id", "assessor_id", "layer", "topic_id", "passage_id", "passage2_id", "item", "campaign_id", "key",
                  "value", "grade", "run_ids", "adjudicated", "latest_change_id", "client_time", "client_seq",
                  "updated_at"), judgements)
            copy(cursor, "assessments_judgementchange",
                 ("id", "change_id", "judgement_id", "assessor_id", "layer", "value", "client_time", "client_seq",
                  "received_at", "session_id", "run_ids", "source", "active_ms", "machine_shown"), changes)
            for table in ("assessments_judgement", "assessments_judgementchange"):
                cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT MAX(id) FROM {table}))")
    if n == 0:  # a review of one finished batch of the measured campaign
        from annotation.services.review import open_review

        campaign.reviewers.add(User.objects.get(username="organiser"))
        open_review(Assignment.objects.filter(campaign=campaign, status=Assignment.Status.DONE).order_by("pk").first())
    return len(judgements)


def copy(cursor, table, columns, rows):
    with cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as out:
        for row in rows:
            out.write_row(row)


def analyse():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


# Measuring --------------------------------------------------------------------------------------------------------


def cases():
    """(name, client user, request) of every page, list and export measured."""
    from django.urls import reverse

    from annotation.models import Assignment, Campaign, Review
    from assessments.models import Run, Topic

    assessor = Assignment.objects.filter(campaign__name="round-0000", status=Assignment.Status.IN_PROGRESS)
    unit = assessor.order_by("position").first()
    review = Review.objects.order_by("pk").first()
    pages = [
        ("queue", unit.assessor, reverse("annotation:home")),
        ("judging page", unit.assessor, reverse("annotation:unit", args=[unit.token])),
        ("dashboard", None, reverse("annotation:dashboard", args=["round-0000"])),
        ("adjudication", None, reverse("annotation:adjudication", args=["round-0000"])),
        ("review queue", None, reverse("annotation:review_queue")),
        ("review", None, reverse("annotation:review", args=[review.pk]) if review else None),
        *browser_pages(unit.assessor.username),
        ("API campaigns", None, "/api/campaigns/"),
        ("API runs", None, "/api/runs/"),
        # The default page holds up to 100 rows: 3-6 at 10K, 100 at 1M. A first page of 5 is full at every size.
        ("API campaigns, first of 5", None, "/api/campaigns/?page_size=5"),
        ("API runs, first page of 5", None, "/api/runs/?page_size=5"),
        ("API runs, last page of 5", None, last_page("/api/runs/", Run.objects.all(), ("-id",))),
        ("API campaigns, last of 5", None, last_page("/api/campaigns/", Campaign.objects.all(), ("name",))),
        ("API campaign topics", None, "/api/campaigns/round-0000/topics/"),
        ("export_qrels (all rounds)", None, ("export_qrels", "--collection", "scale", "--out", QRELS_OUT)),
        ("Y3 JSON (round 0 topics, API zip)", None, "/api/assessments/car-y3/?collection=scale&" + "&".join(
            f"topic={t}" for t in Topic.objects.filter(campaign_settings__campaign__name="round-0000")
            .values_list("external_id", flat=True))),
        ("plot labels (round 0)", None, reverse("annotation:console_download", args=["round-0000", "plot-labels"])),
        ("audit log (round 0)", None, reverse("annotation:console_download", args=["round-0000", "audit"])),
    ]
    return [case for case in pages if case[2] is not None]


def browser_pages(assessor):
    """The data browser of the measured campaign: its first page, filtered by an assessor and disagreement, the
    newest labels' second page (by its cursor) and one item with its history."""
    from django.urls import reverse

    from annotation.models import Campaign
    from annotation.services.browser import Filters, labels

    campaign = Campaign.objects.get(name="round-0000")
    url = reverse("annotation:console_browse", args=[campaign.name])
    second = labels(campaign, Filters(sort="newest")).next_cursor
    item = labels(campaign, Filters(label="transition")).rows[0].pk
    return [
        ("data browser", None, url),
        ("data browser, assessor+disagr.", None, f"{url}?assessor={assessor}&disagreement=1"),
        ("data browser, newest, page 2", None, f"{url}?sort=newest&cursor={second}"),
        ("data browser, an item", None, reverse("annotation:console_browse_item", args=[campaign.name, item])),
    ]


def last_page(url, rows, ordering, size=5):
    """The list's last page of `size` rows by the cursor a client walking it with `next` ends on."""
    from annotation.api.pagination import cursor_value, flip

    keys = rows.order_by(*map(flip, ordering)).values_list(*(field.lstrip("-") for field in ordering))[: size + 1]
    keys = list(keys)
    cursor = f"&cursor={cursor_value(False, keys[size])}" if len(keys) > size else ""
    return f"{url}?page_size={size}{cursor}"


def measure_all_rounds(repeat):
    """The pages that read a whole campaign, on a campaign of every round's labels (made here, dropped after)."""
    from django.urls import reverse

    campaign, labels = copy_rounds()
    print(f"  {ALL_ROUNDS}: one campaign of {labels:,} labels", flush=True)
    try:
        return measure_all(repeat, [
            ("all rounds: browser, disagr.", None,
             reverse("annotation:console_browse", args=[campaign.name]) + "?disagreement=1"),
            ("all rounds: adjudication", None, reverse("annotation:adjudication", args=[campaign.name])),
        ])
    finally:
        drop_all_rounds(campaign)


def copy_rounds():
    """Campaign ALL_ROUNDS: every round's topics, units and labels (re-keyed to it; their changes shared);
    returns it and how many labels it holds."""
    from django.db import connection, transaction

    from annotation.models import Assignment, Campaign, CampaignTopic
    from assessments.models import Run
    from retrieval.models import Collection

    with transaction.atomic():
        campaign = Campaign.objects.create(name=ALL_ROUNDS, task=Campaign.Task.OUTLINE)
        rounds = Campaign.objects.filter(name__startswith="round-")
        CampaignTopic.objects.bulk_create(
            CampaignTopic(campaign=campaign, topic_id=topic_id)
            for topic_id in CampaignTopic.objects.filter(campaign__in=rounds).values_list("topic_id", flat=True))
        run = Run.objects.create(collection=Collection.objects.get(name="scale"), name=ALL_ROUNDS)  # a unit per run
        units = (Assignment.objects.filter(campaign__in=rounds).values_list("assessor_id", "topic_id")
                 .order_by().distinct())
        Assignment.objects.bulk_create(
            Assignment(campaign=campaign, assessor_id=assessor_id, topic_id=topic_id, run=run, position=k,
                       kind=Assignment.Kind.OUTLINE, status=Assignment.Status.DONE, token=uuid.uuid4().hex, seed=k + 1)
            for k, (assessor_id, topic_id) in enumerate(units))
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO assessments_judgement (assessor_id, layer, topic_id, passage_id, passage2_id, item, "
                "campaign_id, key, value, grade, run_ids, adjudicated, latest_change_id, client_time, client_seq, "
                "updated_at) SELECT assessor_id, layer, topic_id, passage_id, passage2_id, item, %s, "
                "%s || substr(key, strpos(key, ':')), value, grade, run_ids, adjudicated, latest_change_id, "
                "client_time, client_seq, updated_at FROM assessments_judgement WHERE campaign_id IN "
                "(SELECT id FROM annotation_campaign WHERE name LIKE 'round-%%')", [campaign.pk, str(campaign.pk)])
            labels = cursor.rowcount
    analyse()
    return campaign, labels


def drop_all_rounds(campaign):
    """Campaign ALL_ROUNDS and its labels, units and run gone (the next size's fill counts the judgements)."""
    from django.db import connection

    from assessments.models import Run

    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM assessments_judgement WHERE campaign_id = %s", [campaign.pk])
    campaign.delete()
    Run.objects.filter(name=ALL_ROUNDS).delete()
    analyse()


def measure_all(repeat, targets=None):
    """{name: figures} of `targets` [(name, client user or None for the organiser, URL or command)], else cases()."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    organiser = get_user_model().objects.get(username="organiser")
    results = {}
    for name, user, target in cases() if targets is None else targets:
        client = Client(HTTP_X_FORWARDED_PROTO="https", secure=True)
        client.force_login(user or organiser)

        def once():
            if isinstance(target, tuple):
                from django.core.management import call_command

                call_command(*target, stdout=io.StringIO())
                return 200, os.path.getsize(QRELS_OUT)
            response = client.get(target)
            size = sum(len(chunk) for chunk in response) if response.streaming else len(response.content)
            return response.status_code, size

        status, size = once()  # warm: caches, imports
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            once()
            times.append(time.perf_counter() - started)
        statements = []

        def count(execute, sql, params, many, context):
            statements.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            once()
        tracemalloc.start()
        once()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        results[name] = dict(status=status, bytes=size, median=statistics.median(times), queries=len(statements), peak=peak)
        print(f"  measured {name}", file=sys.stderr, flush=True)
    return results


def report(results, first):
    print(f"{'':28} {'status':>6} {'median ms':>10} {'queries':>8} {'peak MB':>8} {'× first':>8} {'bytes':>12}")
    for name, r in results.items():
        base = first.get(name)
        ratio = r["median"] / base["median"] if base and base["median"] else float("nan")
        print(f"{name:28} {r['status']:>6} {r['median'] * 1000:10.1f} {r['queries']:8d} {r['peak'] / 2**20:8.1f} "
              f"{ratio:8.2f} {r['bytes']:12,}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
