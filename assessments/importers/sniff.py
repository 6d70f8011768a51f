"""What kind of file an upload looks like, for the importers' "not this format" problems.

One look at the first few kilobytes: JSON keys that only one kind of file has, or the columns of whitespace
separated lines. A file of another kind then fails saying what it seems to be (uploaded as the wrong kind),
not only what it is not. Nothing here decides an import: the importers' own checks do.
"""

import re

HEAD = 8192  # characters looked at
JSON_KINDS = [  # (names, keys or values, only one kind of JSON file has; its name), the most specific first
    (("notes_state", "facet_state", "nonrelevant_state2", "transition_label_state", "saved_data"),
     "TREC CAR Y3 assessments"),
    (("includePages", "includeSections", "trainTitles", "SectionPathPage"), "CAR outlines (the Y3 cast file)"),
    (("run_id", "paragraphs", "paragraph_origins"), "a CAR run (Y3 JSON lines)"),
    (("ground_truth_text",), "plot queries (JSON lines)"),
]


def looks_like(text: str) -> str | None:
    """The kind of file `text` (its start will do) seems to be, in words ("a TREC run"), or None if unknown."""
    head = text[:HEAD].lstrip("\ufeff")
    if re.match(r"\s*<DOC[\s>]", head, re.IGNORECASE) and re.search(r"<DOCNO[\s>]", head, re.IGNORECASE):
        return "TREC SGML documents"
    if re.match(r"\s*<top\s*>", head, re.IGNORECASE):
        return "TREC topics"
    if head.lstrip().startswith(("{", "[")):
        for keys, name in JSON_KINDS:
            if any(f'"{key}"' in head for key in keys):
                return name
        return None
    lines = head.splitlines()[:20]
    if len(text) > HEAD and len(lines) > 1:
        lines.pop()  # cut short
    rows = [line.split() for line in lines if line.strip()]
    if not rows:
        return None
    if all(len(r) == 6 and r[1] == "Q0" for r in rows):
        return "a TREC run"
    if all(len(r) == 4 and re.fullmatch(r"-?\d+", r[3]) for r in rows):
        return "TREC qrels"
    return None


def but_looks_like(text: str, expected: str) -> str:
    """": this looks like X, not <expected>" to end a "not this format" problem, or "" when it looks like nothing
    known (or like what was expected)."""
    found = looks_like(text)
    return f": this looks like {found}, not {expected}" if found and found != expected else ""
