"""Cranfield is searched on title and abstract, as published figures are: our BM25 against bm25s and ir_measures.

The independent side reads the SMART files itself, indexes title + abstract with bm25s (the same
English Snowball stemmer and stop words), and scores with ir_measures; ours imports the
collection, builds a pool with `bm25:k1=1.5,b=0.75` (the run stores its parameters) and scores
with our measures.
"""

import io
import re

import bm25s
import ir_measures
import pytest
import Stemmer
from django.core.management import call_command
from ir_measures import R, nDCG

from assessments.evaluation import parse_measure
from assessments.evaluation.measures import evaluate
from assessments.evaluation.sources import evaluate_stored, stored_ranking
from assessments.models import QrelSet, Run
from retrieval.models import Collection
from tests.retrieval.fixtures import eager_celery, index_dir  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery", "index_dir")]

MEASURES = [parse_measure("nDCG@10"), parse_measure("R@100")]


def smart_records(path):
    """[(id, {letter: text})] of a SMART file; a marker already seen in a record stays text (as records 240, 576, 578 need)."""
    records = []
    for block in re.split(r"^\.I[ \t]+", path.read_text(encoding="utf-8"), flags=re.M)[1:]:
        number, _, body = block.partition("\n")
        fields, letter = {}, None
        for line in body.split("\n"):
            marker = re.fullmatch(r"\.([TABW])\s*", line)
            if marker and marker.group(1) not in fields:
                letter = marker.group(1)
                fields[letter] = []
            elif letter:
                fields[letter].append(line)
        records.append((str(int(number)), {k: " ".join(" ".join(v).split()) for k, v in fields.items()}))
    return records


def independent(folder, *, title, minus_one_gain):
    """{"nDCG@10", "R@100"} of bm25s (k1=1.5, b=0.75, lucene) on the raw files, by ir_measures."""
    docs = smart_records(folder / "cran.all.1400")
    queries = smart_records(folder / "cran.qry")
    texts = [(f"{f.get('T', '')}\n" if title else "") + f.get("W", "") for _, f in docs]
    stem = Stemmer.Stemmer("english").stemWords
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([f["W"] for _, f in queries], stopwords="en", stemmer=stem, return_ids=False,
                            show_progress=False)
    rows, scores = retriever.retrieve(tokens, k=100, show_progress=False, n_threads=0)
    run = [
        ir_measures.ScoredDoc(str(number), docs[row][0], float(score))
        for number, (found, found_scores) in enumerate(zip(rows, scores), start=1)
        for row, score in zip(found, found_scores)
        if score > 0
    ]
    qrels = []
    for line in (folder / "cranqrel").read_text().splitlines():
        if line.split():
            query, doc, code = line.split()
            qrels.append(ir_measures.Qrel(query, doc, minus_one_gain if code == "-1" else 5 - int(code)))
    values = ir_measures.calc_aggregate([nDCG @ 10, R @ 100], qrels, run)
    return {"nDCG@10": values[nDCG @ 10], "R@100": values[R @ 100]}


def raw_qrels(folder, minus_one_gain):
    qrels = {}
    for line in (folder / "cranqrel").read_text().splitlines():
        if line.split():
            query, doc, code = line.split()
            qrels.setdefault(query, {})[doc] = minus_one_gain if code == "-1" else 5 - int(code)
    return qrels


def ours(run, qrels):
    values = {str(m): v for m, v in evaluate_scores(run, qrels).items()}
    return {"nDCG@10": values["nDCG@10"], "R@100": values["R@100"]}


def evaluate_scores(run, qrels):
    from assessments.evaluation.measures import aggregate

    return aggregate(evaluate(qrels, stored_ranking(run), MEASURES), MEASURES)


def build(spec):
    call_command("build_pool", "--name", re.sub(r"[^a-z0-9]+", "-", spec), "--collection", "cranfield",
                 "--retrievers", spec, "--depth", "100", "--no-progress", stdout=io.StringIO())
    return Run.objects.get(source=Run.Source.RETRIEVER, retriever__k1=1.5, retriever__fields=(
        "text" if "fields=text" in spec else "title+text"))


def test_bm25_on_title_and_abstract_matches_bm25s_within_0_002_and_the_run_stores_its_parameters(data_dir):
    folder = data_dir / "cranfield"
    call_command("import_cranfield", str(folder), "--no-progress", stdout=io.StringIO())
    collection = Collection.objects.get(name="cranfield")
    assert collection.indexed_fields == Collection.Fields.TITLE_TEXT

    run = build("bm25:k1=1.5,b=0.75")

    assert run.retriever == {
        "kind": "bm25", "k1": 1.5, "b": 0.75, "method": "lucene", "stemmer": "english", "stopwords": "en",
        "fields": "title+text", "depth": 100,
    }
    # The stored qrels (−1 judged not relevant, trec_eval's default threshold) and the same convention independently.
    stored = evaluate_stored([run], QrelSet.objects.get(), MEASURES).runs[0].all(MEASURES)
    theirs = independent(folder, title=True, minus_one_gain=0)
    assert abs(stored[MEASURES[0]] - theirs["nDCG@10"]) <= 0.002
    assert abs(stored[MEASURES[1]] - theirs["R@100"]) <= 0.002
    # Counting −1 as relevant (gain 1) gives the published-style figures, ours and theirs alike.
    theirs = independent(folder, title=True, minus_one_gain=1)
    assert theirs == pytest.approx({"nDCG@10": 0.4366, "R@100": 0.7568}, abs=0.00005)
    mine = ours(run, raw_qrels(folder, 1))
    assert mine == pytest.approx(theirs, abs=0.002)

    # The abstract alone (fields=text, what Cranfield was indexed on before) is weaker, and matches bm25s on it.
    abstract = build("bm25:k1=1.5,b=0.75,fields=text")
    assert abstract.name == "bm25-k1-1.5-fields-text" and abstract.retriever["fields"] == "text"
    theirs_abstract = independent(folder, title=False, minus_one_gain=1)
    assert theirs_abstract == pytest.approx({"nDCG@10": 0.4301, "R@100": 0.7529}, abs=0.00005)
    assert ours(abstract, raw_qrels(folder, 1)) == pytest.approx(theirs_abstract, abs=0.002)
    assert theirs_abstract["nDCG@10"] < theirs["nDCG@10"]
