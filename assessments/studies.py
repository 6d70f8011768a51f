"""Human-study items and their results: forced choice (seed 000 §5.3, seed 001 §4) and pair rating (seed 003).

Forced choice: per plot topic, the ground-truth chunk and N−1 hard negatives, the best-ranked chunks
of a retriever run that share no sentence with the ground truth. The assessor picks one; a pick is
a Judgement of layer CHOICE keyed (topic, item) whose value is the chosen chunk's external id.
The retriever "picks" the candidate it ranks highest, so its accuracy on the same items sits beside
the humans' (forced_choice_accuracy).

Pair rating: pairs of chunks from an encoder's most and least similar pairs, each rated 1-10 for
narrative similarity (a Judgement of layer RATING keyed (topic, passage, passage2, item)). Each pair
carries a plot topic of the same book, so it can be assigned per (assessor, topic, pool) like any
other work.

Items are keyed by what makes them (forced choice: run, N, topic; pair: encoder and the two chunks),
so making them again with the same inputs updates the same rows and never duplicates them.
"""

import hashlib
import math
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db import transaction

from assessments.models import Judgement, Layer, Pool, Run, RunEntry, StudyItem, Topic
from assessments.services.runs import RunLookupError, find_run, matching
from retrieval.models import Book, Passage

DEFAULT_CHOICES = 20  # seed 000 §5.3: 1 ground truth + 19 negatives
MIN_CHOICES = 2
KEY_LENGTH = 200  # StudyItem.key, Judgement.item
DEFAULT_PAIRS = 20
DEFAULT_MIN_DISTANCE = 30  # sentences between two chunks of a pair (nearer chunks are trivially similar)
MAX_PAIR_PASSAGES = 3000  # chunks encoded for pairs; more are sampled evenly through the book


class StudyError(ValueError):
    """Study items that cannot be made as asked; the message says what and where."""


# --- keys ----------------------------------------------------------------------------------------------------


def item_key(*parts) -> str:
    """A study item key from its parts; a key longer than the field keeps a readable head and a digest."""
    key = ":".join(str(p) for p in parts)
    if len(key) <= KEY_LENGTH:
        return key
    digest = hashlib.sha1(key.encode()).hexdigest()[:16]
    return f"{key[: KEY_LENGTH - len(digest) - 1]}~{digest}"


# --- forced choice -------------------------------------------------------------------------------------------


@dataclass
class _ChoicePlan:
    topic: Topic
    answer: Passage
    negatives: list
    ranks: dict  # passage id -> rank in the run
    retriever_choice: Passage


def _sentences(passage):
    if passage.first_sentence is None or passage.last_sentence is None:
        return None
    return passage.first_sentence, passage.last_sentence


def _overlaps(passage, truth) -> bool:
    """True when `passage` is a ground-truth chunk or shares a sentence of the same book with one."""
    span = _sentences(passage)
    for chunk in truth:
        if chunk.pk == passage.pk:
            return True
        other = _sentences(chunk)
        if span and other and passage.book_id == chunk.book_id and span[0] <= other[1] and other[0] <= span[1]:
            return True
    return False


def _pool_topics(pool, topics, what):
    """The pool's plot topics to make items for: `topics` (Topic objects or external ids) or every one of them."""
    in_pool = {t.external_id: t for t in pool.topics.filter(kind=Topic.Kind.PLOT).order_by("external_id")}
    if topics is None:
        if not in_pool:
            raise StudyError(f"pool {pool.name!r} has no plot topics to make {what} for")
        return list(in_pool.values())
    chosen = []
    for t in topics:
        external_id = t.external_id if isinstance(t, Topic) else str(t)
        if external_id not in in_pool:
            raise StudyError(f"topic {external_id!r} is not a plot topic of pool {pool.name!r}")
        chosen.append(in_pool[external_id])
    return list(dict.fromkeys(chosen))


def _plan_choice(topic, run, n) -> _ChoicePlan:
    truth = sorted(topic.ground_truth.all(), key=lambda p: (p.first_sentence is None, p.first_sentence or 0, p.pk))
    if not truth:
        raise StudyError(f"topic {topic.external_id!r} has no ground-truth chunk (import its ground_truth_text)")
    entries = list(
        RunEntry.objects.filter(run=run, topic=topic).select_related("passage").order_by("rank")
    )
    ranks = {e.passage_id: e.rank for e in entries}
    # The answer: the ground-truth chunk the run ranks best, else the first in book order.
    answer = min(truth, key=lambda p: (ranks.get(p.pk, math.inf), truth.index(p)))
    negatives = [e.passage for e in entries if not _overlaps(e.passage, truth)][: n - 1]
    if len(negatives) < n - 1:
        raise StudyError(
            f"run {run.name!r} has {len(negatives)} candidates for topic {topic.external_id!r} that share no "
            f"sentence with its ground truth; {n} choices need {n - 1} (use a deeper run or a smaller --n)"
        )
    offered = [answer, *negatives]
    retriever_choice = min(offered, key=lambda p: ranks.get(p.pk, math.inf))
    return _ChoicePlan(topic, answer, negatives, ranks, retriever_choice)


def make_forced_choice_items(pool, run, n=DEFAULT_CHOICES, topics=None) -> list[StudyItem]:
    """Forced-choice items of `pool`, one per plot topic: its ground truth plus n−1 hard negatives from `run`.

    The negatives are the run's best-ranked chunks for the topic that share no sentence with any
    ground-truth chunk. The answer is the ground-truth chunk the run ranks best (the first in book order
    when it ranks none); the retriever's choice is the offered candidate it ranks best. Every topic is
    checked before anything is written: a topic without ground truth, or a run with too few candidates,
    raises StudyError and writes nothing. The same inputs give the same items (updated, not duplicated).
    """
    if not isinstance(n, int) or n < MIN_CHOICES:
        raise StudyError(f"n: a forced choice needs at least {MIN_CHOICES} candidates, not {n!r}")
    if run.collection_id != pool.collection_id:
        raise StudyError(f"run {run.name!r} is not in pool {pool.name!r}'s collection {pool.collection.name!r}")
    plans = [_plan_choice(topic, run, n) for topic in _pool_topics(pool, topics, "forced-choice items")]
    items = []
    with transaction.atomic():
        for plan in plans:
            offered = [plan.answer, *plan.negatives]
            item, _ = StudyItem.objects.update_or_create(
                pool=pool,
                key=item_key("choice", n, run.name, plan.topic.external_id),
                defaults=dict(
                    kind=StudyItem.Kind.CHOICE, topic=plan.topic, answer=plan.answer, run=run,
                    retriever_choice=plan.retriever_choice, passage=None, passage2=None, similarity=None,
                    metadata={
                        "n": n,
                        "run": run.name,
                        "answer": plan.answer.external_id,
                        "candidates": [p.external_id for p in offered],
                        "run_ranks": {p.external_id: plan.ranks.get(p.pk) for p in offered},
                    },
                ),
            )
            item.candidates.set(offered)
            items.append(item)
    return items


# --- pair rating ---------------------------------------------------------------------------------------------


def _pair_passages(pool, passages, book, max_passages):
    if (passages is None) == (book is None):
        raise StudyError("pairs need either passages or a book")
    if book is not None:
        if isinstance(book, str):
            found = Book.objects.filter(slug=book).first()
            if found is None:
                raise StudyError(f"book: no book {book!r}")
            book = found
        passages = Passage.objects.filter(book=book)
    passages = sorted(passages, key=lambda p: (p.book_id or 0, p.first_sentence or 0, p.pk))
    if len(passages) < 2:
        raise StudyError(f"pairs need at least 2 passages, got {len(passages)}")
    outside = [p.external_id for p in passages if p.collection_id != pool.collection_id]
    if outside:
        raise StudyError(f"passages {', '.join(outside[:5])} are not in pool {pool.name!r}'s collection")
    if len(passages) > max_passages:  # evenly through the book, deterministically
        step = len(passages) / max_passages
        passages = [passages[int(i * step)] for i in range(max_passages)]
    return passages


def _far_enough(a, b, min_distance) -> bool:
    if a.book_id is None or a.book_id != b.book_id or a.first_sentence is None or b.first_sentence is None:
        return True
    return abs(a.position - b.position) >= min_distance


def ranked_pairs(vectors, passages, *, min_distance=DEFAULT_MIN_DISTANCE, max_similarity=None):
    """[(similarity, i, j)] of every allowed pair i < j, most similar first (ties by i, j).

    Pairs of chunks nearer than `min_distance` sentences in the same book are left out (neighbours are
    trivially alike), and with `max_similarity` so are pairs above it (near duplicates, seed 003).
    """
    import numpy as np

    sims = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    pairs = []
    for i in range(len(passages)):
        for j in range(i + 1, len(passages)):
            s = float(sims[i, j])
            if max_similarity is not None and s > max_similarity:
                continue
            if _far_enough(passages[i], passages[j], min_distance):
                pairs.append((s, i, j))
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
    return pairs


def encode_passages(encoder: str, texts, progress=None):
    """Vectors (L2-normalised) of `texts` with the encoder named by a retrieval spec (`dense`, `dense:MODEL,…`).

    Loads torch: call it from commands and workers, never from the web process.
    """
    from retrieval import specs
    from retrieval.encoders import load_encoder
    from retrieval.services.work import encoder_spec

    spec_text = encoder if encoder.startswith("dense") else f"dense:{encoder}"
    try:
        spec = specs.parse(spec_text)
    except specs.SpecError as exc:
        raise StudyError(f"encoder: {exc}") from exc
    if spec.get("model") is None:
        spec["model"] = specs.default_encoder()
    return spec, load_encoder(encoder_spec(spec)).encode_passages(list(texts), progress=progress)


def make_pair_items(pool, *, passages=None, book=None, encoder="dense", count=DEFAULT_PAIRS,
                    min_distance=DEFAULT_MIN_DISTANCE, max_similarity=None, max_passages=MAX_PAIR_PASSAGES,
                    progress=None) -> list[StudyItem]:
    """Pair-rating items of `pool`: the encoder's ⌈count/2⌉ most and ⌊count/2⌋ least similar pairs of chunks.

    `passages` (chunks) or `book` (a Book or its slug: all its chunks) give the chunks; `encoder` is a
    dense retrieval spec (`dense` is the default encoder). Each item gets a plot topic of the pool about
    the same book, in turn, so pairs are assigned like other work. At most `max_passages` chunks are
    encoded, taken evenly through the book. Same inputs, same items.
    """
    if not isinstance(count, int) or count < 1:
        raise StudyError(f"count: at least 1 pair, not {count!r}")
    passages = _pair_passages(pool, passages, book, max_passages)
    books = {p.book_id for p in passages}
    topics = list(
        pool.topics.filter(kind=Topic.Kind.PLOT, book_id__in=books - {None}).order_by("external_id")
    )
    if not topics:
        raise StudyError(f"pool {pool.name!r} has no plot topic about the passages' book; pairs need one each")
    spec, vectors = encode_passages(encoder, [p.text for p in passages], progress=progress)
    pairs = ranked_pairs(vectors, passages, min_distance=min_distance, max_similarity=max_similarity)
    most = math.ceil(count / 2)
    least = count - most
    if len(pairs) < count:
        raise StudyError(f"only {len(pairs)} pairs of chunks are far enough apart; {count} were asked for")
    chosen = [("most", rank, pairs[rank]) for rank in range(most)]
    chosen += [("least", rank, pairs[len(pairs) - 1 - rank]) for rank in range(least)]
    label = spec["model"].rstrip("/").rsplit("/", 1)[-1]
    by_book = defaultdict(list)
    for t in topics:
        by_book[t.book_id].append(t)
    items = []
    with transaction.atomic():
        for group, rank, (similarity, i, j) in chosen:
            a, b = passages[i], passages[j]
            key = item_key("pair", label, a.external_id, b.external_id)
            candidates = by_book.get(a.book_id) or topics
            # the topic follows from the pair alone, so making the items again never moves a rated pair
            topic = candidates[int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % len(candidates)]
            item, _ = StudyItem.objects.update_or_create(
                pool=pool,
                key=key,
                defaults=dict(
                    kind=StudyItem.Kind.PAIR, topic=topic, passage=a, passage2=b,
                    similarity=similarity, answer=None, run=None, retriever_choice=None,
                    metadata={"group": group, "rank": rank + 1, "encoder": spec["model"], "count": count,
                              "min_distance": min_distance, "max_similarity": max_similarity,
                              "passages": len(passages)},
                ),
            )
            item.candidates.clear()
            items.append(item)
    return items


# --- pairs from two rankings (two runs, or two pools) -----------------------------------------------------------

DEFAULT_PAIR_DEPTH = 5
MAX_PAIR_DEPTH = 100


def _ranking(source, topic_ids, depth) -> dict:
    """{topic id: [passage, ...]} of a run's or a pool's ranking, best first, down to `depth`."""
    if isinstance(source, Run):
        rows = RunEntry.objects.filter(run=source, topic_id__in=topic_ids, rank__lte=depth)
    else:
        from assessments.models import PoolCandidate

        rows = PoolCandidate.objects.filter(pool=source, topic_id__in=topic_ids, rank__lte=depth)
    ranked = defaultdict(list)
    for row in rows.select_related("passage").order_by("topic_id", "rank", "passage_id"):
        ranked[row.topic_id].append(row.passage)
    return ranked


def make_ranked_pair_items(pool, first, second, *, depth=DEFAULT_PAIR_DEPTH, topics=None) -> list[StudyItem]:
    """Pair-rating items of `pool` from two rankings of its collection, two runs or two pools (`first`, `second`):
    per plot topic of the pool, the chunk each ranks at 1, 2, ... `depth`, paired rank by rank (a chunk both put at
    the same rank is no pair). The pair's two sides come in an order drawn from its key, and neither the key nor the
    page names the runs or pools (judging is blind; the metadata keeps them for the organiser). Every topic is
    planned before anything is written; StudyError says what cannot be made. Same inputs, same items."""
    if type(first) is not type(second) or not isinstance(first, (Run, Pool)):
        raise StudyError("sources: two runs, or two pools")
    what = "runs" if isinstance(first, Run) else "pools"
    if first.pk == second.pk:
        raise StudyError(f"sources: choose two different {what}")
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_PAIR_DEPTH:
        raise StudyError(f"depth: from 1 to {MAX_PAIR_DEPTH} ranks")
    for source in (first, second):
        if source.collection_id != pool.collection_id:
            raise StudyError(f"sources: {what[:-1]} {source.name!r} is not in pool {pool.name!r}'s collection")
    chosen = _pool_topics(pool, topics, "pair items")
    ids = [t.pk for t in chosen]
    a_lists, b_lists = _ranking(first, ids, depth), _ranking(second, ids, depth)
    tag = hashlib.sha1(f"{what}:{first.pk}:{second.pk}".encode()).hexdigest()[:10]
    plans = []
    for topic in chosen:
        for rank, (a, b) in enumerate(zip(a_lists.get(topic.pk, []), b_lists.get(topic.pk, [])), start=1):
            if a.pk == b.pk:
                continue
            key = item_key("pair", f"ranked-{tag}", topic.external_id, a.external_id, b.external_id)
            if int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 2:
                a, b = b, a  # which side a ranking's chunk is on says nothing
            plans.append((topic, rank, key, a, b))
    if not plans:
        raise StudyError(f"sources: {what} {first.name!r} and {second.name!r} give no pairs on pool {pool.name!r}'s "
                         f"topics within rank {depth} (they rank none of them, or the same chunks)")
    items = []
    with transaction.atomic():
        for topic, rank, key, a, b in plans:
            item, _ = StudyItem.objects.update_or_create(
                pool=pool, key=key,
                defaults=dict(
                    kind=StudyItem.Kind.PAIR, topic=topic, passage=a, passage2=b, similarity=None, answer=None,
                    run=None, retriever_choice=None,
                    metadata={"group": "ranked", "rank": rank, "sources": what, "first": first.name,
                              "second": second.name, "depth": depth},
                ),
            )
            item.candidates.clear()
            items.append(item)
    return items


# --- results -------------------------------------------------------------------------------------------------


def _share(correct, total):
    return correct / total if total else None


def choice_answers(pool):
    """[(item, assessor username, chosen external id)] of the pool's forced-choice items (adjudicated rows and practice
    answers, Judgement.objects.without_practice, left out)."""
    items = {(i.topic_id, i.key): i for i in StudyItem.objects.filter(pool=pool, kind=StudyItem.Kind.CHOICE)
             .select_related("answer", "retriever_choice", "run", "topic")}
    rows = (
        Judgement.objects.filter(layer=Layer.CHOICE, adjudicated=False, item__in={key for _, key in items},
                                 topic_id__in={t for t, _ in items}, value__isnull=False)
        .without_practice()
        .order_by("assessor__username", "topic_id", "item")
        .values_list("topic_id", "item", "assessor__username", "value")
    )
    return [(items[(t, key)], user, value) for t, key, user, value in rows if (t, key) in items and value is not None]


def forced_choice_accuracy(pool) -> dict:
    """Human vs retriever accuracy on the pool's forced-choice items.

    `assessors`: per assessor, items answered, correct, accuracy. `human`: all answers together (micro
    average). `retrievers`: per run, its accuracy on the items humans answered (`items`, `correct`,
    `accuracy`) and on all its items (`all_items`, `all_correct`, `all_accuracy`). Adjudicated rows are
    not an assessor's answers and are left out; an accuracy over no items is None.
    """
    all_items = list(StudyItem.objects.filter(pool=pool, kind=StudyItem.Kind.CHOICE).select_related("run"))
    answers = choice_answers(pool)
    per_assessor = defaultdict(lambda: [0, 0])
    answered = {}
    for item, user, chosen in answers:
        correct = item.answer is not None and chosen == item.answer.external_id
        per_assessor[user][0] += 1
        per_assessor[user][1] += correct
        answered[item.pk] = item
    total = sum(a for a, _ in per_assessor.values())
    right = sum(c for _, c in per_assessor.values())
    runs = defaultdict(lambda: {"items": 0, "correct": 0, "all_items": 0, "all_correct": 0})
    for item in all_items:
        name = item.run.name if item.run else ""
        hit = item.retriever_choice_id is not None and item.retriever_choice_id == item.answer_id
        runs[name]["all_items"] += 1
        runs[name]["all_correct"] += hit
        if item.pk in answered:
            runs[name]["items"] += 1
            runs[name]["correct"] += hit
    return {
        "pool": pool.name,
        "items": len(all_items),
        "answered_items": len(answered),
        "assessors": [
            {"assessor": user, "answered": a, "correct": c, "accuracy": _share(c, a)}
            for user, (a, c) in sorted(per_assessor.items())
        ],
        "human": {"answered": total, "correct": right, "accuracy": _share(right, total)},
        "retrievers": [
            {"run": name, **counts, "accuracy": _share(counts["correct"], counts["items"]),
             "all_accuracy": _share(counts["all_correct"], counts["all_items"])}
            for name, counts in sorted(runs.items())
        ],
    }


def pair_ratings(pool) -> dict:
    """The 1-10 ratings of the pool's pair items: count, mean and histogram, overall and per group (most/least); no
    practice rating (Judgement.objects.without_practice)."""
    items = {(i.topic_id, i.key): i for i in StudyItem.objects.filter(pool=pool, kind=StudyItem.Kind.PAIR)}
    rows = Judgement.objects.filter(
        layer=Layer.RATING, adjudicated=False, item__in={key for _, key in items}, value__isnull=False,
    ).without_practice().values_list("topic_id", "item", "value")
    groups = defaultdict(list)
    for t, key, value in rows:
        item = items.get((t, key))
        if item is not None and isinstance(value, int):
            groups["all"].append(value)
            groups[item.metadata.get("group", "")].append(value)

    def summary(values):
        counts = Counter(values)
        return {"ratings": len(values), "mean": sum(values) / len(values) if values else None,
                "histogram": [counts.get(v, 0) for v in range(1, 11)]}

    return {"items": len(items), **{name: summary(groups.get(name, [])) for name in ("all", "most", "least")}}


def pool_book(pool) -> Book:
    """The book of a plot pool's collection; StudyError when the collection is not a book."""
    book = Book.objects.filter(collection_id=pool.collection_id).first()
    if book is None:
        raise StudyError(f"pool {pool.name!r}'s collection {pool.collection.name!r} is not a book; name --book")
    return book


def resolve_pool_and_run(pool_name, run_name=None):
    """(Pool, Run or None) named on a command line; StudyError says which name is unknown."""
    pool = Pool.objects.filter(name=pool_name).select_related("collection").first()
    if pool is None:
        raise StudyError(f"--pool: no pool named {pool_name!r}")
    run = None
    if run_name:
        in_collection = Run.objects.filter(collection=pool.collection)
        if not matching(in_collection, run_name).exists():
            names = ", ".join(in_collection.values_list("name", flat=True)[:20])
            raise StudyError(f"--run: collection {pool.collection.name!r} has no run {run_name!r} (runs: {names or 'none'})")
        try:
            run = find_run(run_name, in_collection, field="--run")
        except RunLookupError as exc:
            raise StudyError(str(exc)) from None
    return pool, run
