"""Word overlap of a query and its plot, seed 000 eq. 5, per query and per dataset (seed 000 Table 2).

Eq. 5 is |C ∩ T| / |C|: C is the set of the query's words, T the set of the plot's words, both
after word tokenisation and stop-word removal; the denominator is the query's set (how much of the
query the plot already says). Table 2 gives the mean over a dataset's queries, in percent.

Our reading, where the paper leaves things open (it used NLTK's tokeniser and stop words; NLTK is
not installed here):
- Stop words: NLTK's English list, as bm25s ships it (bm25s.stopwords.STOPWORDS_EN_PLUS, 179 words);
  `--stopwords en` takes bm25s' short list (33 words) instead.
- Words: lower-cased runs of letters and digits, with inner apostrophes and hyphens kept
  ("don't", "well-known"); curly apostrophes count as straight. Punctuation is not a word (NLTK's
  tokeniser makes tokens of it, which would add "," and "." to both sets). A possessive "'s" is
  dropped ("Buck's" is "buck"), as NLTK's tokeniser splits it off.
- The plot T is the text of the topic's ground-truth chunks together (the "positive candidate
  documents" of Table 2); `plot="span"` takes the verbatim ground-truth span instead.
- A query with no word left after stop-word removal has no overlap (eq. 5 is undefined) and is
  left out of the mean, and reported as such.
"""

import re
from dataclasses import dataclass
from functools import cache

STOPWORD_LISTS = {"en_plus": "STOPWORDS_EN_PLUS", "en": "STOPWORDS_EN"}  # names in bm25s.stopwords
DEFAULT_STOPWORDS = "en_plus"
PLOT_TEXTS = ("chunks", "span")
_WORD = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})


@cache
def stopword_list(name: str = DEFAULT_STOPWORDS) -> frozenset:
    """A stop-word list of bm25s by our name (en_plus, en); bm25s is imported only here, never by the web process."""
    from bm25s import stopwords

    if name not in STOPWORD_LISTS:
        raise ValueError(f"stopwords: {name!r} is not one of {', '.join(STOPWORD_LISTS)}")
    return frozenset(getattr(stopwords, STOPWORD_LISTS[name]))


def words(text: str, stopwords=None) -> set[str]:
    """The set of words of `text`, lower-cased, without stop words (default: NLTK's list; see the module docstring)."""
    stopwords = stopword_list() if stopwords is None else stopwords
    found = set()
    for token in _WORD.findall(text.translate(_APOSTROPHES).lower()):
        if token.endswith("'s") and token not in stopwords:
            token = token[:-2]
        if token and token not in stopwords:
            found.add(token)
    return found


def word_overlap(query: str, plot: str, stopwords=None) -> float | None:
    """Eq. 5: |C ∩ T| / |C| for the query's word set C and the plot's T; None when C is empty."""
    query_words = words(query, stopwords)
    if not query_words:
        return None
    return len(query_words & words(plot, stopwords)) / len(query_words)


@dataclass
class QueryOverlap:
    """One query's overlap with its plot: the shared words and the ratio (None when undefined)."""

    topic: str
    dataset: str
    query_words: int
    shared: list
    overlap: float | None


def topic_overlaps(topics, *, plot="chunks", stopwords=DEFAULT_STOPWORDS, progress=iter) -> list[QueryOverlap]:
    """QueryOverlap of each plot topic with its ground truth; the dataset is the topic's collection."""
    if plot not in PLOT_TEXTS:
        raise ValueError(f"plot: {plot!r} is not one of {', '.join(PLOT_TEXTS)}")
    stop = stopword_list(stopwords)
    rows = []
    for topic in progress(topics):
        if plot == "span":
            text = topic.ground_truth_text
        else:
            text = " ".join(c.text for c in sorted(topic.ground_truth.all(), key=lambda c: (c.first_sentence or 0, c.pk)))
        query_words = words(topic.text, stop)
        shared = sorted(query_words & words(text, stop))
        ratio = len(shared) / len(query_words) if query_words else None
        rows.append(QueryOverlap(topic.external_id, topic.collection.name, len(query_words), shared, ratio))
    return rows


def dataset_means(rows) -> dict:
    """{dataset: (mean overlap in percent or None, queries counted, queries left out)}, plus 'all' over every row."""
    groups = {}
    for row in rows:
        groups.setdefault(row.dataset, []).append(row)
    groups["all"] = list(rows)
    result = {}
    for name, members in groups.items():
        values = [r.overlap for r in members if r.overlap is not None]
        mean = 100 * sum(values) / len(values) if values else None
        result[name] = (mean, len(values), len(members) - len(values))
    return result
