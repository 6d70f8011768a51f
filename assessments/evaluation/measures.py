"""Run evaluation as trec_eval computes it, measures named in ir_measures' notation, and N-RODCG for plot topics.

Pure Python (no Django). Qrels are {topic: {doc: grade}}; a run is {topic: [doc, …]} best first.
Conventions (trec_eval's, which ir_measures reproduces through pytrec_eval):

- a document is relevant when its grade ≥ rel (rel=1 unless the measure says `(rel=N)`);
- every topic of the qrels is scored, a topic the run lacks scoring 0 on every measure (as
  ir_measures fills it; trec_eval -c likewise, except that it still counts NumRel); with
  only_run_topics, just the topics in both (trec_eval without -c).
  `all` is the mean over the scored topics (the sum for NumRet, NumRel, NumRelRet);
- nDCG gains are the grades (grades ≤ 0 gain nothing), discount log2(rank + 1), the ideal
  ranks every judged document by grade (cut at k for nDCG@k);
- ranking a TREC file: score descending, ties by docid descending (trec_eval's order).

Measures: AP, AP@k, nDCG, nDCG@k, P@k, R@k, RR, RR@k, Rprec, Success@k, Judged@k, NumRet,
NumRel, NumRelRet, and N-RODCG@k (seed 000 eq. 1–4: d = distance from a retrieved chunk's mean
sentence index to the nearest ground-truth chunk's, gain 1/(d+1) when d < α (α=5), discount
log2(rank + 1), normalised by an ideal: `ideal=book` (default: the best k chunks of the whole
book) or `ideal=retrieved` (the retrieved chunks re-sorted, the paper's literal wording)).
"""

import math
import re
from dataclasses import dataclass

NAMES = {
    "ap": "AP", "map": "AP", "ndcg": "nDCG", "p": "P", "r": "R", "recall": "R", "rr": "RR", "mrr": "RR",
    "rprec": "Rprec", "success": "Success", "judged": "Judged", "numret": "NumRet", "numrel": "NumRel",
    "numrelret": "NumRelRet", "n-rodcg": "N-RODCG", "nrodcg": "N-RODCG",
}
NEED_CUTOFF = {"P", "R", "Success", "Judged", "N-RODCG"}
NO_CUTOFF = {"Rprec", "NumRel"}
SUMMED = {"NumRet", "NumRel", "NumRelRet"}
NO_REL = {"nDCG": "its gains are the grades", "Judged": "it counts judged documents, whatever their grade",
          "N-RODCG": "its gains are distances to the plot"}
TREC_EVAL_NAMES = {"AP": "map", "nDCG": "ndcg", "P": "P", "R": "recall", "RR": "recip_rank", "Rprec": "Rprec",
                   "Success": "success", "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret"}
ALPHA = 5
MEASURE = re.compile(r"(?P<name>[A-Za-z][A-Za-z-]*)(?:\((?P<params>[^)]*)\))?(?:@(?P<cutoff>[0-9]+))?\Z")


class MeasureError(ValueError):
    """A measure name that cannot be understood; the message says why."""


@dataclass(frozen=True)
class Measure:
    """One measure: name, cutoff, relevance threshold; for N-RODCG the window α and the ideal."""

    name: str
    cutoff: int | None = None
    rel: int = 1
    alpha: int = ALPHA
    ideal: str = "book"

    def __str__(self):
        params = []
        if self.rel != 1:
            params.append(f"rel={self.rel}")
        if self.name == "N-RODCG":
            if self.alpha != ALPHA:
                params.append(f"alpha={self.alpha}")
            if self.ideal != "book":
                params.append(f"ideal={self.ideal}")
        text = self.name + (f"({','.join(params)})" if params else "")
        return text + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def trec_eval_name(self) -> str | None:
        """The trec_eval name of this measure (map_cut_10, ndcg_cut_5, P_5…), or None when it has none."""
        if self.rel != 1 or self.name not in TREC_EVAL_NAMES:
            return None
        base = TREC_EVAL_NAMES[self.name]
        if self.cutoff is None:
            return base
        if self.name in ("AP", "nDCG"):
            return f"{base}_cut_{self.cutoff}"
        if self.name in ("P", "R", "Success"):
            return f"{base}_{self.cutoff}"
        return None


def parse_measure(text: str) -> Measure:
    """`nDCG@10`, `P(rel=2)@5`, `AP`, `N-RODCG(ideal=retrieved)@10` … → Measure."""
    match = MEASURE.match(text.strip())
    if not match:
        raise MeasureError(f"{text!r} is not a measure (e.g. AP, nDCG@10, P@5, R@100, RR, Rprec, N-RODCG@10)")
    name = NAMES.get(match["name"].lower())
    if name is None:
        raise MeasureError(f"unknown measure {match['name']!r}; known: {', '.join(sorted(set(NAMES.values())))}")
    cutoff = int(match["cutoff"]) if match["cutoff"] else None
    if name in NEED_CUTOFF and cutoff is None:
        raise MeasureError(f"{name} needs a cutoff, e.g. {name}@10")
    if name in NO_CUTOFF and cutoff is not None:
        raise MeasureError(f"{name} takes no cutoff")
    if cutoff is not None and cutoff < 1:
        raise MeasureError(f"{text!r}: the cutoff must be at least 1")
    fields = {}
    for item in filter(None, (p.strip() for p in (match["params"] or "").split(","))):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if key == "rel" and eq and re.fullmatch(r"-?[0-9]+", value.strip()):
            fields["rel"] = int(value)
        elif key == "alpha" and name == "N-RODCG" and re.fullmatch(r"[0-9]+", value.strip()):
            fields["alpha"] = int(value)
        elif key == "ideal" and name == "N-RODCG" and value.strip() in ("book", "retrieved"):
            fields["ideal"] = value.strip()
        else:
            raise MeasureError(f"{text!r}: unknown parameter {item!r}")
    if "rel" in fields and name in NO_REL:  # ignored, it gave nDCG's (or Judged's) value under another name
        raise MeasureError(f"{text!r}: {name} takes no rel= ({NO_REL[name]})")
    if "rel" in fields and name == "NumRet":  # ir_measures: NumRet(rel=N) counts the retrieved with grade ≥ N
        name = "NumRelRet"
    return Measure(name, cutoff, **fields)


def trec_order(scored: dict) -> list:
    """Documents of one topic in trec_eval's order: score descending, ties by docid descending."""
    return [doc for doc, _ in sorted(scored.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def topic_value(measure: Measure, ranking: list, judged: dict, relevant=None) -> float:
    """One measure for one topic: `ranking` is the run's documents best first, `judged` the topic's qrels;
    `relevant`, when given, the judged documents with grade ≥ measure.rel (else worked out here)."""
    name, k = measure.name, measure.cutoff
    if relevant is None:
        relevant = {doc for doc, grade in judged.items() if grade >= measure.rel}
    num_rel = len(relevant)
    top = ranking[:k] if k is not None else ranking
    if name == "NumRet":
        return float(len(top))
    if name == "NumRel":
        return float(num_rel)
    if name == "NumRelRet":
        return float(sum(1 for doc in top if doc in relevant))
    if name == "P":
        return sum(1 for doc in top if doc in relevant) / k
    if name == "R":
        return sum(1 for doc in top if doc in relevant) / num_rel if num_rel else 0.0
    if name == "Success":
        return 1.0 if any(doc in relevant for doc in top) else 0.0
    if name == "Judged":
        return sum(1 for doc in top if doc in judged) / len(top) if top else 0.0
    if name == "RR":
        return next((1.0 / rank for rank, doc in enumerate(top, start=1) if doc in relevant), 0.0)
    if name == "Rprec":
        return sum(1 for doc in ranking[:num_rel] if doc in relevant) / num_rel if num_rel else 0.0
    if name == "AP":
        if not num_rel:
            return 0.0
        found, total = 0, 0.0
        for rank, doc in enumerate(top, start=1):
            if doc in relevant:
                found += 1
                total += found / rank
        return total / num_rel
    if name == "nDCG":
        gains = [max(judged.get(doc, 0), 0) for doc in top]
        dcg = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1) if gain)
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)
        ideal = ideal[:k] if k is not None else ideal
        idcg = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(ideal, start=1))
        return dcg / idcg if idcg else 0.0
    raise MeasureError(f"{measure} needs book positions (stored plot runs), not qrels")


def evaluate(qrels: dict, run: dict, measures, *, only_run_topics: bool = False) -> dict:
    """{topic: {Measure: value}} over the qrels' topics (or, with only_run_topics, those the run has too)."""
    measures = [m for m in measures if m.name != "N-RODCG"]
    scores = {}
    for topic in sorted(qrels):
        ranking = run.get(topic)
        if ranking is None and only_run_topics:
            continue
        if ranking is None:  # a topic the run lacks: 0 on every measure (NumRel too), as ir_measures fills it
            scores[topic] = {m: 0.0 for m in measures}
        else:
            judged = qrels[topic]
            relevant = {rel: {doc for doc, grade in judged.items() if grade >= rel} for rel in {m.rel for m in measures}}
            scores[topic] = {m: topic_value(m, ranking, judged, relevant[m.rel]) for m in measures}
    return scores


def aggregate(per_topic: dict, measures) -> dict:
    """{Measure: mean over topics} (sums for the Num* counts); a measure no topic has is left out."""
    result = {}
    for measure in measures:
        values = [values[measure] for values in per_topic.values() if measure in values]
        if values:
            result[measure] = math.fsum(values) if measure.name in SUMMED else math.fsum(values) / len(values)
    return result


# --- N-RODCG (seed 000 §3.3) --------------------------------------------------------------------------------


def rod_gain(position: float, truth: list, alpha: int = ALPHA) -> float:
    """f(d) = 1/(d+1) when d < α, else 0, with d the distance to the nearest ground-truth position."""
    if not truth or position is None:
        return 0.0
    d = min(abs(position - t) for t in truth)
    return 1.0 / (d + 1.0) if d < alpha else 0.0


def _dcg(gains) -> float:
    return math.fsum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1) if gain)


def nrodcg(retrieved: list, truth: list, book: list, measure: Measure) -> float:
    """N-RODCG@k of one plot topic.

    `retrieved`: positions (mean sentence index) of the run's chunks, best first; `truth`: the
    ground-truth chunks' positions; `book`: every chunk position of the book (for ideal=book).
    """
    k = measure.cutoff
    gains = [rod_gain(p, truth, measure.alpha) for p in retrieved[:k]]
    pool = gains if measure.ideal == "retrieved" else [rod_gain(p, truth, measure.alpha) for p in book]
    ideal = _dcg(sorted(pool, reverse=True)[:k])
    return _dcg(gains) / ideal if ideal else 0.0
