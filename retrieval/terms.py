"""A query's terms in a text: where the words of a topic's title occur in a document, stemmed as BM25 stems them
(Snowball English through PyStemmer, bm25s' English stop words left out), so "proposal" finds "proposals".

Offsets are [start, end) in code points, as Python counts a str; the judging page marks them.
"""

import re
from functools import lru_cache

WORD = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=1)
def _stem_words():
    import Stemmer

    return Stemmer.Stemmer("english").stemWords


@lru_cache(maxsize=1)
def _stop_words() -> frozenset:
    from bm25s.stopwords import STOPWORDS_EN  # loaded on first use: the site's other pages do without it

    return frozenset(STOPWORDS_EN)


def query_stems(query: str) -> set[str]:
    """The stems of a query's words, stop words left out."""
    words = [w.lower() for w in WORD.findall(query or "")]
    stops = _stop_words()
    return set(_stem_words()([w for w in words if w not in stops]))


def term_spans(query: str, text: str) -> list[list[int]]:
    """[start, end) of every word of `text` whose stem is a stem of one of the query's words."""
    stems = query_stems(query)
    if not stems or not text:
        return []
    matches = list(WORD.finditer(text))
    stemmed = _stem_words()([m.group().lower() for m in matches])
    return [[m.start(), m.end()] for m, stem in zip(matches, stemmed) if stem in stems]
