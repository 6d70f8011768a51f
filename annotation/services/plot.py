"""Plot labelling and the human-study pages (forced choice, pair rating): what they show, and saving one change.

A plot assignment is an Assignment with a pool and no run: one query (a plot topic) and that
topic's candidates in the pool. Its stored kind (set from the campaign's ``mode`` when it is made:
annotation.services.status.kind_for) chooses the page: plot labels (grade each candidate, mark the
query's spans), forced choice (pick one of each item's candidates) or pair rating (rate each pair 1-10).
The campaign's settings:

- ``plot_scale``: the graded answer, a list of [value, label] (default 2 describes it, 1 partly,
  0 does not);
- ``context_sentences``: sentences shown on each side of a candidate chunk (default 5).

Candidates, items and an item's choices come in an order shuffled with the assignment's seed, never
in a retriever's order. A study item's key may name what made it (a forced-choice item's run), so the page knows an
item only by its handle (item_handle: a hash keyed with the server's secret), and a save maps it back (change_key).
Plain functions like annotation.services.outline: they take models and values, return values, and raise
ChangeInvalid (naming the field) or SettingsInvalid, never HTTP errors.
"""

from functools import reduce
from operator import or_

from django.db.models import Q
from django.utils.crypto import constant_time_compare, salted_hmac

from annotation.services.candidates import (  # noqa: F401 (candidates, shuffled, SettingsInvalid: callers)
    SettingsInvalid, candidate_passage, candidates, is_span, merged, served_order, served_state, settings,
    shown_machine_labels, shuffled,
)
from annotation.services.errors import ChangeInvalid
from annotation.services.progress import Progress
from assessments.labels import DEFAULT_PLOT_SCALE
from assessments.models import Judgement, Layer, PoolCandidate, StudyItem
from retrieval.models import Sentence

DEFAULT_SCALE = DEFAULT_PLOT_SCALE
DEFAULT_CONTEXT = 5
MAX_CONTEXT = 50
PLOT_LAYERS = (Layer.PLOT_GRADE, Layer.PLOT_SPANS)  # a plot labels unit's: a candidate's grade, the query's spans
PLOT_NOUN = "candidate"
STUDY_LAYERS = {StudyItem.Kind.CHOICE: Layer.CHOICE, StudyItem.Kind.PAIR: Layer.RATING}  # a study unit's one layer
STUDY_NOUNS = {StudyItem.Kind.CHOICE: "item", StudyItem.Kind.PAIR: "pair"}
HANDLE_LENGTH = 20  # hex digits of a study item's handle (80 bits)


# Settings ----------------------------------------------------------------------------------------------------


def plot_scale(assignment) -> list:
    """The campaign's graded answer: [[value, label], ...], best first as the campaign lists it."""
    scale = settings(assignment).get("plot_scale", DEFAULT_SCALE)
    ok = isinstance(scale, list) and len(scale) >= 2 and all(
        isinstance(e, list) and len(e) == 2 and isinstance(e[0], int) and not isinstance(e[0], bool)
        and e[0] >= 0 and isinstance(e[1], str) and e[1].strip()
        for e in scale
    )
    if not ok or len({e[0] for e in scale}) != len(scale):
        raise SettingsInvalid("plot_scale: expected a list of at least two [value, label] with distinct values 0 or more")
    return [list(e) for e in scale]


def context_sentences(assignment) -> int:
    """Sentences shown before and after a candidate chunk (the reader's field of vision)."""
    n = settings(assignment).get("context_sentences", DEFAULT_CONTEXT)
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_CONTEXT:
        raise SettingsInvalid(f"context_sentences: expected a whole number from 0 to {MAX_CONTEXT}")
    return n


def _scale_keys(scale) -> list:
    """Keys of the scale's answers: the value's own digit when every value is one, else 1, 2, 3... in order."""
    if all(v <= 9 for v, _ in scale):
        return [str(v) for v, _ in scale]
    return [str(i) if i <= 9 else "" for i in range(1, len(scale) + 1)]


# Reading -----------------------------------------------------------------------------------------------------


def study_items(assignment, kind) -> list:
    """The assignment's study items of `kind` ("choice" or "pair") in this assessor's order."""
    rows = StudyItem.objects.filter(pool_id=assignment.pool_id, topic_id=assignment.topic_id, kind=kind)
    if kind == StudyItem.Kind.CHOICE:
        rows = rows.prefetch_related("candidates")
    else:
        rows = rows.select_related("passage", "passage2")
    return shuffled(rows, assignment.seed, "items")


def with_context(passages, window) -> list:
    """For each passage, the paragraphs to show: a list of paragraphs, each a list of {"text", "chunk"} segments.

    A book chunk is shown with up to `window` sentences of its book on each side, in their paragraphs
    (the chunk joins the paragraph it starts or ends in); a passage that is not a book chunk is shown
    alone. One query for all the sentences.
    """
    spans = [(p.book_id, p.first_sentence, p.last_sentence) for p in passages if _in_book(p)]
    sentences = {}
    if spans and window:
        query = reduce(or_, (
            Q(book_id=b, index__gte=max(0, first - window), index__lte=last + window) for b, first, last in spans
        ))
        for s in Sentence.objects.filter(query).only("book_id", "index", "paragraph", "text"):
            sentences[s.book_id, s.index] = s
    out = []
    for p in passages:
        chunk = {"text": p.text, "chunk": True}
        if not (_in_book(p) and window):
            out.append([[chunk]])
            continue
        book = p.book_id
        before = [sentences[book, i] for i in range(max(0, p.first_sentence - window), p.first_sentence) if (book, i) in sentences]
        after = [sentences[book, i] for i in range(p.last_sentence + 1, p.last_sentence + 1 + window) if (book, i) in sentences]
        first, last = sentences.get((book, p.first_sentence)), sentences.get((book, p.last_sentence))
        paragraphs = _paragraphs(before)
        if paragraphs and first and before[-1].paragraph == first.paragraph:
            paragraphs[-1].append(chunk)
        else:
            paragraphs.append([chunk])
        tail = _paragraphs(after)
        if tail and last and after[0].paragraph == last.paragraph:
            paragraphs[-1].extend(tail.pop(0))
        out.append(paragraphs + tail)
    return out


def _in_book(passage) -> bool:
    return bool(passage.book_id) and passage.first_sentence is not None and passage.last_sentence is not None


def _paragraphs(sentences) -> list:
    """Consecutive sentences grouped by paragraph: [[{"text", "chunk": False}], ...] (one segment a paragraph)."""
    groups = []
    for s in sentences:
        if groups and groups[-1][0] == s.paragraph:
            groups[-1][1].append(s.text)
        else:
            groups.append((s.paragraph, [s.text]))
    return [[{"text": " ".join(texts), "chunk": False}] for _, texts in groups]


def plot_labels(assessor, topic_id, passage_ids, campaign_id=None) -> dict:
    """The assessor's current grades and spans in one campaign for these candidates:
    {"grades": {pid: v}, "spans": {pid: [[s, e]]}}."""
    labels = {"grades": {}, "spans": {}}
    rows = Judgement.objects.in_campaign(campaign_id).filter(adjudicated=False,
        assessor=assessor, topic_id=topic_id, layer__in=PLOT_LAYERS, passage_id__in=set(passage_ids),
    ).values_list("layer", "passage_id", "value")
    for layer, pid, value in rows:
        if value is None or value == []:
            continue
        labels["grades" if layer == Layer.PLOT_GRADE else "spans"][pid] = value
    return labels


def study_labels(assessor, topic_id, layer, keys, campaign_id=None) -> dict:
    """The assessor's current choices or ratings in one campaign of these items: {item key: value}."""
    rows = Judgement.objects.in_campaign(campaign_id).filter(adjudicated=False,
        assessor=assessor, topic_id=topic_id, layer=layer, item__in=set(keys), value__isnull=False,
    ).values_list("item", "value")
    return dict(rows)


def _progress(noun, total, labels) -> Progress:
    return Progress(total=total, done=len(labels), noun=noun, size=total)


def plot_page(assignment, *, readonly=False) -> dict:
    """Everything the plot labelling page needs: the candidates with their context, and `state` (plain data).

    Where the campaign serves a judging order (annotation.services.judging_order), the page holds the candidates
    this assessor graded, in the topic's sequence, then the one to judge now; otherwise every candidate, shuffled.
    """
    served = served_order(assignment)
    if served is None:
        rows = candidates(assignment)
    else:
        by_id = {c.passage_id: c for c in PoolCandidate.objects.filter(
            pool_id=assignment.pool_id, topic_id=assignment.topic_id, passage_id__in=served[0]).select_related("passage")}
        rows = [by_id[pid] for pid in served[0]]
    passages = [c.passage for c in rows]
    contexts = with_context(passages, context_sentences(assignment))
    scale = plot_scale(assignment)
    labels = plot_labels(assignment.assessor_id, assignment.topic_id, [p.pk for p in passages], assignment.campaign_id)
    state = {
        "kind": assignment.kind,
        "assignment": assignment.token,
        "status": assignment.status,
        "readonly": readonly,
        "topic": assignment.topic.external_id,
        "query": assignment.topic.text,
        "scale": [[v, label, key] for (v, label), key in zip(scale, _scale_keys(scale))],
        "candidates": [{"id": p.pk, "n": n} for n, p in enumerate(passages, start=1)],
        "labels": {k: {str(pid): v for pid, v in labels[k].items()} for k in labels},
    }
    progress = _progress(PLOT_NOUN, len(passages), labels["grades"])
    if served is not None:
        state["ordered"] = served_state(served[1], assignment, passages)
        progress = _progress(PLOT_NOUN, len(served[1].pool), labels["grades"])
    machine = shown_machine_labels(assignment, [p.pk for p in passages])
    if machine:  # only where the campaign shows pre-labels (annotation.services.prelabels), never blind items
        state["machine"] = {str(pid): label for pid, label in machine.items()}
    return {
        "candidates": [{"n": n, "passage": p, "paragraphs": c, "machine": machine.get(p.pk)}
                       for n, (p, c) in enumerate(zip(passages, contexts), start=1)],
        "scale": state["scale"],
        "state": state,
        "progress": progress,
    }


def study_page(assignment, *, readonly=False) -> dict:
    """Everything a forced-choice ("choice") or pair-rating ("pair") page needs, and its `state` (the unit's kind is
    its study items' kind)."""
    kind = assignment.kind
    items = study_items(assignment, kind)
    layer = STUDY_LAYERS[kind]
    labels = study_labels(assignment.assessor_id, assignment.topic_id, layer, [i.key for i in items], assignment.campaign_id)
    shown = []
    for n, item in enumerate(items, start=1):
        if kind == StudyItem.Kind.CHOICE:
            ranks = (item.metadata or {}).get("candidates") or []
            order = {external_id: i for i, external_id in enumerate(ranks)}
            options = shuffled(item.candidates.all(), assignment.seed, item.key,
                               avoid=lambda p: order.get(p.external_id, len(order)) if order else p.pk)
        else:
            options = [p for p in (item.passage, item.passage2) if p is not None]
        shown.append({"n": n, "item": item, "handle": item_handle(assignment, item.key), "options": options})
    state = {
        "kind": kind,
        "assignment": assignment.token,
        "status": assignment.status,
        "readonly": readonly,
        "topic": assignment.topic.external_id,
        "items": [{"key": s["handle"], "n": s["n"], "options": [p.external_id for p in s["options"]]} for s in shown],
        "labels": {s["handle"]: labels[s["item"].key] for s in shown if s["item"].key in labels},
    }
    return {"items": shown, "state": state, "progress": _progress(STUDY_NOUNS[kind], len(items), labels)}


# Checking a change ----------------------------------------------------------------------------------------------


def plot_change_key(assignment, data, layer, value) -> dict:
    """The key and value of a plot labels change, checked: record_judgement's keyword arguments. The key is `passage`
    (a candidate's id) for plot_grade and plot_spans. Raises ChangeInvalid naming the field."""
    if layer not in PLOT_LAYERS:
        raise ChangeInvalid("layer", f"expected one of {', '.join(PLOT_LAYERS)}")
    key = {"passage": candidate_passage(assignment, data.get("passage"), "not a candidate of this assignment")}
    if layer == Layer.PLOT_GRADE and value is not None:
        try:
            values = [v for v, _ in plot_scale(assignment)]
        except SettingsInvalid as exc:
            raise ChangeInvalid("assignment", str(exc)) from exc
        if isinstance(value, bool) or not isinstance(value, int) or value not in values:
            raise ChangeInvalid("value", f"expected one of {values} (or null to clear)")
    if layer == Layer.PLOT_SPANS and isinstance(value, list):
        key["_value"] = merged(value) if all(is_span(s) for s in value) else value
    return key


def study_change_key(assignment, data, layer, value) -> dict:
    """The key and value of a study change (choice, rating), checked: record_judgement's keyword arguments. The key
    is `item` (a study item's handle on this unit's page, stored as the item's key). Raises ChangeInvalid naming the
    field."""
    kind = assignment.kind
    if layer != STUDY_LAYERS[kind]:
        raise ChangeInvalid("layer", f"expected one of {STUDY_LAYERS[kind]}")
    item = study_item(assignment, kind, data.get("item"))
    if item is None:
        raise ChangeInvalid("item", "not a study item of this assignment")
    key = {"item": item.key}
    if kind == StudyItem.Kind.CHOICE:
        offered = {p.external_id for p in item.candidates.all()}
        if value is not None and (not isinstance(value, str) or value not in offered):
            raise ChangeInvalid("value", "not one of this item's candidates")
    else:
        key["passage"], key["passage2"] = item.passage, item.passage2
    return key


def item_handle(assignment, key) -> str:
    """The name of a study item on its unit's page: a hash of the item's key and the unit's seed, keyed with the
    server's secret. It names nothing (a key may name the run that made the item: judging is blind), it stays while
    items are added or made again (a change waiting in the page's outbox still finds its item), and no page can
    compute it from a guessed key."""
    return salted_hmac("annotation.plot.item_handle", f"{assignment.seed}:{key}").hexdigest()[:HANDLE_LENGTH]


def study_item(assignment, kind, handle):
    """The unit's study item of `kind` that `handle` names on its page (item_handle), with its passages; else None.
    A stored key is no handle."""
    if not isinstance(handle, str) or len(handle) != HANDLE_LENGTH:
        return None
    items = StudyItem.objects.filter(pool_id=assignment.pool_id, topic_id=assignment.topic_id, kind=kind)
    found = next((pk for pk, key in items.values_list("pk", "key")
                  if constant_time_compare(item_handle(assignment, key), handle)), None)
    return None if found is None else items.select_related("passage", "passage2").filter(pk=found).first()


def plot_progress(assignment) -> Progress:
    """A plot labels unit's progress now: candidates graded in its campaign."""
    ids = list(PoolCandidate.objects.filter(pool_id=assignment.pool_id, topic_id=assignment.topic_id)
               .values_list("passage_id", flat=True))
    grades = plot_labels(assignment.assessor_id, assignment.topic_id, ids, assignment.campaign_id)["grades"]
    return _progress(PLOT_NOUN, len(ids), grades)


def study_progress(assignment) -> Progress:
    """A study unit's progress now: items chosen or pairs rated in its campaign."""
    kind = assignment.kind
    keys = list(StudyItem.objects.filter(pool_id=assignment.pool_id, topic_id=assignment.topic_id, kind=kind)
                .values_list("key", flat=True))
    labels = study_labels(assignment.assessor_id, assignment.topic_id, STUDY_LAYERS[kind], keys, assignment.campaign_id)
    return _progress(STUDY_NOUNS[kind], len(keys), labels)
