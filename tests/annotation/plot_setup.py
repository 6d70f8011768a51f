"""Plot assignments on real sample data for the plot page tests: a book of data/books, a query of data/plot,
a pool of candidate chunks in a known rank order, and study items made from them."""

import json

from django.core.management import call_command

from annotation.models import Campaign
from assessments.models import Pool, PoolCandidate, StudyItem, Topic
from retrieval.models import Book, Passage
from tests import factories
from tests.factories import DATA

BOOK = "call-of-the-wild"
QUERY = "demo-1"
EXCERPT = 400  # lines of the book enough for demo-1: the first chapter, with the query's ground truth


def load_query(tmp_path, slug=BOOK, query_id=QUERY, text=None, lines=None):
    """Import a sample book (its first `lines` lines only, when given: faster) and one of its sample queries (its
    text replaced by `text` when given); returns the topic."""
    if not Book.objects.filter(slug=slug).exists():
        source = DATA / "books" / f"{slug}.txt"
        if lines:
            excerpt = tmp_path / f"{slug}.txt"
            excerpt.write_text("\n".join(source.read_text(encoding="utf-8").splitlines()[:lines]) + "\n", encoding="utf-8")
            source = excerpt
        call_command("import_book", str(source), "--title", slug, "--slug", slug, "--no-progress")
    lines = (DATA / "plot" / "sample-queries.jsonl").read_text(encoding="utf-8").splitlines()
    query = next(json.loads(line) for line in lines if line.strip() and json.loads(line)["query_id"] == query_id)
    if text is not None:
        query["query"] = text
    path = tmp_path / f"{query_id}.jsonl"
    path.write_text(json.dumps(query) + "\n", encoding="utf-8")
    call_command("import_plot_queries", str(path), "--no-progress")
    return Topic.objects.get(external_id=query_id, book__slug=slug)


def plot_pool(topic, size=6, name="plot-pool"):
    """A pool of `size` chunks for the topic: its ground truth and chunks spread through the book, ranked in chunk order."""
    book = topic.book
    truth = list(topic.ground_truth.order_by("first_sentence"))
    chunks = list(Passage.objects.filter(book=book).order_by("first_sentence"))
    step = max(1, len(chunks) // size)
    picked = truth + [c for c in chunks[::step] if c not in truth]
    picked = sorted(picked[:size], key=lambda p: p.first_sentence)
    pool = Pool.objects.create(name=name, collection=book.collection, status=Pool.Status.READY)
    pool.topics.set([topic])
    PoolCandidate.objects.bulk_create(
        PoolCandidate(pool=pool, topic=topic, passage=p, rank=rank) for rank, p in enumerate(picked, start=1)
    )
    return pool, picked


def campaign(name="plot-labels", **settings):
    return factories.campaign(name, Campaign.Task.PLOT, settings=settings)


def assign(assessor, topic, pool, camp):
    return factories.assignment(assessor, topic, pool=pool, campaign=camp)


def choice_item(pool, topic, passages, answer, key="choice-1"):
    """A forced-choice item over `passages` whose ground truth is `answer`; the first passage is the retriever's pick."""
    item = StudyItem.objects.create(pool=pool, kind=StudyItem.Kind.CHOICE, key=key, topic=topic, answer=answer,
                                    retriever_choice=passages[0])
    item.candidates.set(passages)
    return item


def pair_item(pool, topic, passage, passage2, key="pair-1"):
    return StudyItem.objects.create(pool=pool, kind=StudyItem.Kind.PAIR, key=key, topic=topic,
                                    passage=passage, passage2=passage2, similarity=0.5)


def handle(assignment, key):
    """The name the unit's page gives the study item `key` (a save names the item by it)."""
    from annotation.services.plot import item_handle

    return item_handle(assignment, key)


def labelling(tmp_path, size=3, username="judge", lines=None, **settings):
    """A plot labelling assignment for `username` on the sample query demo-1 and a pool of `size` chunks."""
    topic = load_query(tmp_path, lines=lines)
    pool, _ = plot_pool(topic, size=size)
    return assign(factories.user(username), topic, pool, campaign(**settings))


def outline_assignment(username="judge"):
    """A small CAR article (two passages, one facet) to check that the outline page shares the autosave's behaviour."""
    coll = factories.collection("car")
    topic = factories.topic(coll, "tqa2:L_0001", title="Water", facets=[("tqa2:L_0001/T_1", "Droughts")])
    passages = [factories.passage(coll, f"{i:040x}", text=f"Passage {i}.") for i in range(1, 3)]
    run = factories.run(coll, "guir", {topic: passages})
    return factories.assignment(factories.user(username), topic, run=run)
