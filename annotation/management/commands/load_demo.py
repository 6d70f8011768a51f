"""manage.py load_demo: the sample data, an organiser and three assessors, and a pool ready to judge.

The nuggets campaign's answers are extractive, not an LLM's: two "systems" made here from the ad hoc pool's BM25
ranking (rag_answers), written as a TREC RAG answers file (--rag-answers) and read by import_rag_answers.

It ends with the demo accounts and the address to open, so they are what is left on the terminal. The retrieval
workers run in-process (no broker), and Celery logs a line for each task they run ("Task … succeeded in …"): those
go to a log file (--task-log), not the terminal, unless -v 2.
"""

import json
import logging
import secrets
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import BaseCommand, call_command
from django.db import transaction

from annotation.services.assignment import assign_campaign
from annotation.services.campaigns import create_campaign
from annotation.models import Assignment, Campaign
from annotation.roles import Role, ensure_groups
from assessments.models import Answer, Pool, PoolCandidate, Run, Topic
from assessments.services.pooling import assemble_pool
from assessments.studies import StudyError, make_forced_choice_items
from retrieval.books import split_paragraph
from retrieval.models import Book, Collection

BOOKS = [
    ("call-of-the-wild", "The Call of the Wild"),
    ("tom-sawyer", "The Adventures of Tom Sawyer"),
    ("moby-dick", "Moby Dick"),
    ("a-tale-of-two-cities", "A Tale of Two Cities"),
]
CAR_COLLECTION = "car-y3"
DEMO_POOL = "car-trial-union"
# A plot pool built by the retrieval workers (in-process without a broker): BM25 + dense encoder, fused by RRF.
PLOT_POOL_BOOK = "call-of-the-wild"
PLOT_POOL = f"plot-{PLOT_POOL_BOOK}"
DEMO_CAMPAIGN = "car-trial"
DEMO_OVERLAP = 3  # every assessor judges every article: the dashboard has agreement to show
PLOT_CAMPAIGN = "plot-labels"     # assessors grade the plot pool's candidates and mark the query spans
CHOICE_CAMPAIGN = "plot-choice"   # forced choice (seed 000 §5.3) over the same queries, humans vs the dense retriever
CHOICE_RETRIEVER = "dense"        # the retriever run whose top chunks are the negatives (and whose pick is compared)
CHOICE_N = 20                     # the ground truth and 19 hard negatives, as in seed 000
ADHOC_CAMPAIGN = "cranfield-adhoc"  # TREC-style ad hoc judging: Cranfield abstracts against TREC topics
ADHOC_POOL = "cranfield-bm25"
ADHOC_TOPICS = ["1", "2", "3", "4", "5", "6"]  # data/cranfield/demo-topics.trec: title, description, some narratives
RAG_CAMPAIGN = "cranfield-rag"  # TREC RAG nuggets over the same topics: extractive answers from the BM25 pool
# Two extractive "systems" (run name: the pool's BM25 ranks whose abstracts give a sentence each, cited)
RAG_SYSTEMS = {"extractive-top3": (1, 2, 3), "extractive-next2": (4, 5)}
RAG_CREATOR = "assessor1"  # writes the topics' nugget banks (stage create)
RAG_JUDGES = ["assessor2", "assessor3"]  # label every answer's nuggets (stage support)
DEMO_URL = "http://127.0.0.1:8000/"  # where `make demo` serves (its HOST)
TASK_LOGGER = "celery.app.trace"  # Celery's line per task run: "Task … succeeded in …s: …"
PEOPLE = [("organiser", Role.ORGANISER), ("assessor1", Role.ASSESSOR), ("assessor2", Role.ASSESSOR), ("assessor3", Role.ASSESSOR)]


class Command(BaseCommand):
    help = (
        "Load the sample data (CAR Y3 topics and trial runs, four books with sample plot queries, Cranfield), create "
        "an organiser and three assessors with new passwords (printed), and build a CAR pool from the trial runs. "
        "Parts already loaded are skipped, so it can run again."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-progress", action="store_true", help="Do not show progress bars.")
        parser.add_argument("--url", default=DEMO_URL, help=f"Where the demo is served, printed last (default {DEMO_URL}).")
        parser.add_argument(
            "--task-log", type=Path, default=None,
            help="Where Celery's line per background task goes (default var/log/demo-tasks.log); -v 2 shows them here.",
        )
        parser.add_argument(
            "--rag-answers", type=Path, default=None,
            help=f"Where the {RAG_CAMPAIGN} campaign's answers file is written before it is imported "
                 "(default var/demo/cranfield-rag-answers.jsonl).",
        )

    def handle(self, *args, **options):
        task_log = options["task_log"] or Path(settings.BASE_DIR) / "var" / "log" / "demo-tasks.log"
        with tasks_logged_to(None if options["verbosity"] >= 2 else task_log):
            accounts = self.load(options)
        if options["verbosity"] < 2:
            self.stdout.write(f"Background tasks' log lines: {task_log} (-v 2 shows them here).")
        self.stdout.write("\nDemo accounts (passwords are new each time this runs):")
        for line in accounts:
            self.stdout.write(line)
        self.stdout.write(f"\nOpen {options['url']} and sign in: an assessor to judge, the organiser for the console "
                          f"(campaigns, dashboards, results) and the admin ({options['url']}admin/).")

    def load(self, options) -> list[str]:
        """Everything the demo loads; the accounts' lines to print last."""
        data = settings.SAMPLE_DATA_DIR
        quiet = ["--no-progress"] if options["no_progress"] else []
        self.step("CAR Y3 outlines", not Topic.objects.filter(collection__name=CAR_COLLECTION, external_id__startswith="tqa2:").exists(),
                  lambda: call_command("import_car_outlines", str(data / "car-y3" / "tqa-heading-cast-and-more-6.json"), *quiet))
        runs = sorted(str(p) for p in (data / "car-y3" / "runs").glob("*.json"))
        self.step("CAR trial runs", not Run.objects.filter(collection__name=CAR_COLLECTION).exists(),
                  lambda: call_command("import_car_run", *runs, "--create-topics", *quiet))
        for slug, title in BOOKS:
            self.step(f"book {title}", not Book.objects.filter(slug=slug).exists(),
                      lambda slug=slug, title=title: call_command("import_book", str(data / "books" / f"{slug}.txt"), "--title", title, "--slug", slug, *quiet))
        self.step("sample plot queries", not Topic.objects.filter(kind=Topic.Kind.PLOT).exists(),
                  lambda: call_command("import_plot_queries", str(data / "plot" / "sample-queries.jsonl"), *quiet))
        self.step("Cranfield", not Collection.objects.filter(name="cranfield").exists(),
                  lambda: call_command("import_cranfield", str(data / "cranfield"), *quiet))
        pool = self.demo_pool()
        self.stdout.write(
            f"Pool {pool.name}: {pool.candidates.count()} candidates over {pool.topics.count()} topics "
            f"from {pool.runs.count()} runs ({pool.get_status_display()})."
        )
        self.step(f"plot pool {PLOT_POOL} (BM25 + dense, RRF, through the retrieval workers)",
                  not Pool.objects.filter(name=PLOT_POOL, status=Pool.Status.READY).exists(),
                  lambda: call_command("build_pool", "--name", PLOT_POOL, "--collection", PLOT_POOL_BOOK,
                                       "--retrievers", "bm25", "dense", "--strategy", "rrf", "--depth", "20",
                                       "--per-topic", "10", *quiet))
        self.step("Cranfield's first queries as TREC topics (title, description, narrative)",
                  not Topic.objects.filter(collection__name="cranfield", metadata__has_key="description").exists(),
                  lambda: call_command("import_topics", str(data / "cranfield" / "demo-topics.trec"),
                                       "--collection", "cranfield", "--update", *quiet))
        self.step(f"ad hoc pool {ADHOC_POOL} (BM25 through the retrieval workers)",
                  not Pool.objects.filter(name=ADHOC_POOL, status=Pool.Status.READY).exists(),
                  lambda: call_command("build_pool", "--name", ADHOC_POOL, "--collection", "cranfield",
                                       "--topics", *ADHOC_TOPICS, "--retrievers", "bm25", "--depth", "10", *quiet))
        accounts = self.people()
        self.assignments(pool)
        self.plot_campaigns(Pool.objects.get(name=PLOT_POOL))
        self.adhoc_campaign(Pool.objects.get(name=ADHOC_POOL))
        self.rag_campaign(Pool.objects.get(name=ADHOC_POOL), options)
        return accounts

    def step(self, what, needed, action):
        if needed:
            self.stdout.write(f"Loading {what}…")
            action()
        else:
            self.stdout.write(f"Already loaded: {what}.")

    def demo_pool(self):
        """A depth-20 union pool over every CAR trial run, for the topics those runs cover."""
        with transaction.atomic():
            collection = Collection.objects.get(name=CAR_COLLECTION)
            runs = Run.objects.filter(collection=collection)
            topics = Topic.objects.filter(run_entries__run__in=runs).distinct()
            pool, created = Pool.objects.get_or_create(
                name=DEMO_POOL, defaults=dict(collection=collection, strategy=Pool.Strategy.UNION, depth=20)
            )
            if created:
                pool.topics.set(topics)
                pool.runs.set(runs)
        if pool.status != Pool.Status.READY:
            assemble_pool(pool.pk)
            pool.refresh_from_db()
        return pool

    def people(self) -> list[str]:
        """Create (or reset) the demo accounts with fresh random passwords; a line for each, to print."""
        groups = ensure_groups()
        User = get_user_model()
        lines = []
        for username, role in PEOPLE:
            user, _ = User.objects.get_or_create(username=username)
            password = secrets.token_urlsafe(9)
            user.set_password(password)
            user.is_staff = role == Role.ORGANISER
            user.save()
            user.groups.add(groups[role])
            lines.append(f"  {role.label:<10} {username:<10} {password}")
        return lines

    def assignments(self, pool):
        """The CAR campaign: the demo pool's (topic, run) articles to all three assessors (overlap 3, so the demo
        shows agreement on every passage) through annotation.services.assignment; already there: kept."""
        with transaction.atomic():
            campaign, _ = Campaign.objects.get_or_create(
                name=DEMO_CAMPAIGN,
                defaults=dict(title="CAR Y3 trial articles", task=Campaign.Task.OUTLINE,
                              guidelines="Read the gold article first, then judge the article from top to bottom."),
            )
            assessors = [u for u, role in PEOPLE if role == Role.ASSESSOR]
            result = assign_campaign(campaign, assessors, pools=[pool], overlap=DEMO_OVERLAP, seed=1)
        self.stdout.write(f"Campaign {campaign.name} (overlap {DEMO_OVERLAP}): {result.summary()}")

    def adhoc_campaign(self, pool):
        """An ad hoc campaign on the Cranfield pool: every assessor grades every topic's documents (0-3, evidence)."""
        with transaction.atomic():
            campaign, _ = Campaign.objects.get_or_create(
                name=ADHOC_CAMPAIGN,
                defaults=dict(title="Cranfield: aeronautics abstracts against TREC topics", task=Campaign.Task.ADHOC,
                              settings={"grade_scale": "dl", "evidence": True},
                              guidelines="Read the topic (open the narrative with n where there is one), then grade "
                                         "each abstract; mark the sentences that make it relevant with e."),
            )
            assessors = [u for u, role in PEOPLE if role == Role.ASSESSOR]
            result = assign_campaign(campaign, assessors, pools=[pool], overlap=len(assessors), seed=1)
        self.stdout.write(f"Campaign {campaign.name}: {result.summary()}")

    def rag_campaign(self, pool, options):
        """A nuggets (TREC RAG) campaign over the ad hoc topics: two extractive systems' answers imported through
        import_rag_answers, assessor1 writing the topics' nugget banks, assessor2 and 3 labelling every answer."""
        self.step(f"nuggets campaign {RAG_CAMPAIGN}", not Campaign.objects.filter(name=RAG_CAMPAIGN).exists(),
                  self.make_rag_campaign)
        campaign = Campaign.objects.get(name=RAG_CAMPAIGN)
        path = options["rag_answers"] or Path(settings.BASE_DIR) / "var" / "demo" / "cranfield-rag-answers.jsonl"

        def answers():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(a) + "\n" for a in rag_answers(pool, campaign.track.topics.all())),
                            encoding="utf-8")
            self.stdout.write(f"Wrote the answers to {path}.")
            call_command("import_rag_answers", str(path), "--campaign", RAG_CAMPAIGN)

        self.step(f"extractive answers of {', '.join(RAG_SYSTEMS)} (from the BM25 pool {pool.name})",
                  not Answer.objects.filter(campaign_id=campaign.pk).exists(), answers)
        made = assign_campaign(campaign, [RAG_CREATOR], overlap=1, stage="create", seed=1)
        judged = assign_campaign(campaign, RAG_JUDGES, overlap=len(RAG_JUDGES), stage="support", seed=1)
        self.stdout.write(
            f"Campaign {campaign.name}: {RAG_CREATOR} writes the nugget banks of {made.units} topics, "
            f"{' and '.join(RAG_JUDGES)} label each of {judged.units} answers ({made.created + judged.created} "
            f"assignments new)."
        )

    def make_rag_campaign(self):
        campaign = create_campaign(name=RAG_CAMPAIGN, task=Campaign.Task.NUGGETS, topics=ADHOC_TOPICS,
                                   collection="cranfield", title="Cranfield: nuggets of extractive answers (TREC RAG)")
        campaign.guidelines = ("Nugget banks: read the topic and the answers' cited abstracts, then write the facts a "
                               "good answer gives, each vital or okay. Nugget support: for each nugget, does the "
                               "answer support it, partly or not?")
        campaign.save(update_fields=["guidelines"])

    def plot_campaigns(self, pool):
        """A plot labelling campaign and a forced-choice campaign on the plot pool, one assignment per query and assessor.

        Their assignments come after the CAR articles in each queue. The forced-choice items are the ground truth
        and the dense retriever's best-ranked other chunks (assessments.studies.make_forced_choice_items).
        """
        User = get_user_model()
        assessors = list(User.objects.filter(username__in=[u for u, role in PEOPLE if role == Role.ASSESSOR]).order_by("username"))
        topics = list(pool.topics.order_by("external_id"))
        built = Run.objects.filter(pk__in=pool.params.get("built", {}).get("runs", [])).order_by("name")
        run = next((r for r in built if r.name.startswith(CHOICE_RETRIEVER)), None) or built.first()
        try:
            items = make_forced_choice_items(pool, run, n=CHOICE_N) if run else []
        except StudyError as exc:
            self.stdout.write(f"No forced-choice items: {exc}")
            items = []
        campaigns = [
            (PLOT_CAMPAIGN, "Plot retrieval: does the query describe the plot?", {"mode": "label", "context_sentences": 5},
             "Read the query, then each candidate with the sentences around it (the marked chunk is the candidate). "
             "Answer whether the query describes the marked plot, and mark the words of the query that describe it."),
            (CHOICE_CAMPAIGN, "Plot retrieval: which passage does the query describe?", {"mode": "choice"},
             "Exactly one of the passages is the plot the reader commented on. Pick it."),
        ]
        created = 0
        with transaction.atomic():
            start = Assignment.objects.filter(assessor__in=assessors, run__isnull=False).count() // max(1, len(assessors))
            for offset, (name, title, settings_, guidelines) in enumerate(campaigns):
                campaign, _ = Campaign.objects.get_or_create(
                    name=name, defaults=dict(title=title, task=Campaign.Task.PLOT, settings=settings_, guidelines=guidelines),
                )
                campaign.pools.add(pool)
                for assessor in assessors:
                    for i, topic in enumerate(topics):
                        _, made = Assignment.objects.get_or_create(
                            assessor=assessor, topic=topic, pool=pool, campaign=campaign,
                            defaults=dict(position=start + offset * len(topics) + i),
                        )
                        created += made
        self.stdout.write(
            f"Campaigns {PLOT_CAMPAIGN} and {CHOICE_CAMPAIGN}: {len(topics)} queries of pool {pool.name} for each of "
            f"{len(assessors)} assessors ({created} assignments new), {len(items)} forced-choice items "
            f"against run {run.name if run else '-'}."
        )


def rag_answers(pool, topics) -> list[dict]:
    """TREC RAG answers of RAG_SYSTEMS for `topics`: each sentence the first of a pool candidate's abstract (after
    the title, which Cranfield's abstracts repeat), citing that document; candidates by the pool's (BM25) rank."""
    answers = []
    for topic in sorted(topics, key=lambda t: (len(t.external_id), t.external_id)):  # "2" before "10"
        ranked = {c.rank: c.passage for c in PoolCandidate.objects.filter(pool=pool, topic=topic).select_related("passage")}
        for run_id, ranks in RAG_SYSTEMS.items():
            passages = [ranked[r] for r in ranks if r in ranked]
            sentences = [first_sentence(p) for p in passages]
            answers.append({
                "run_id": run_id, "topic_id": topic.external_id, "topic": topic.title,
                "references": [p.external_id for p in passages],
                "response_length": sum(len(s.split()) for s in sentences),
                "answer": [{"text": s, "citations": [i]} for i, s in enumerate(sentences)],
            })
    return answers


def first_sentence(passage) -> str:
    """The abstract's first sentence that is not its title (pysbd, as books are split)."""
    sentences = split_paragraph(" ".join(passage.text.split()))
    title = " ".join(passage.title.split())
    rest = [s for s in sentences if s != title]
    return (rest or sentences or [title])[0]


@contextmanager
def tasks_logged_to(path):
    """Celery's per-task lines into the file `path` for the duration (its warnings and errors still reach the
    terminal); None leaves them where LOGGING sends them."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    logger = logging.getLogger(TASK_LOGGER)
    to_file = logging.FileHandler(path, encoding="utf-8")
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    to_terminal = logging.StreamHandler()
    to_terminal.setLevel(logging.WARNING)
    propagate = logger.propagate
    logger.addHandler(to_file)
    logger.addHandler(to_terminal)
    logger.propagate = False
    try:
        yield
    finally:
        logger.propagate = propagate
        logger.removeHandler(to_terminal)
        logger.removeHandler(to_file)
        to_file.close()
