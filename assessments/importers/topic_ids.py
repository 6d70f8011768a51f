"""THE rule of how a topic id from a file is matched: topics, runs and qrels files (and ir_datasets) all call topic_id.

TREC-1 to 3 topic files number their topics `<num> Number: 051` while NIST's qrels and the participants' runs say
`51`; trec_eval compares the strings, so the two never meet there. Here a topic id made only of ASCII digits is read
as the number it writes: leading zeros are dropped (`051`, `0051` → `51`; `000` → `0`), so a padded topics file, its
runs and its qrels name the same topic, and the stored id (what exports write) is the one NIST's qrels and runs use.
Every other id is kept exactly as written (`MB001`, `31_1`, `q051`, `0x51`, `٥١`): only plain numbers can be told
equal without guessing, so ids that genuinely differ are never merged. No Django here (the file readers use it).
"""


def topic_id(raw: str) -> str:
    """The id a topic is stored and matched under: `raw` less leading zeros when it is all ASCII digits."""
    if len(raw) > 1 and raw[0] == "0" and raw.isascii() and raw.isdigit():
        return raw.lstrip("0") or "0"
    return raw


def topic_id_column(qids: list) -> list:
    """`qids` (a file's topic column) with topic_id applied; the list itself when nothing changes (the usual case)."""
    changed = {q: topic_id(q) for q in set(qids) if q[:1] == "0"}
    changed = {q: c for q, c in changed.items() if q != c}
    if not changed:
        return qids
    return [changed.get(q, q) for q in qids]
