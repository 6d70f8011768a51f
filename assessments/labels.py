"""The label registry: every label set the pages, the JavaScript (as data the page is given), the dashboard,
adjudication, review and the exports show, with its name, key, grade and colour, in one place.

The stored values are the TextChoices of assessments.models.judgements (Relevance, Transition) and, for TREC RAG's
answers, NuggetSupport and CitationSupport below; wire names of external formats (MustLabel, SameTransition…) stay in
the importers and exporters.
"""

from django.db import models

from assessments.models.judgements import RELEVANCE_GRADE, Relevance, Transition

# Relevance of a passage for a facet, as offered on the outline page: value, name, key, qrels grade, colour.
RELEVANCE = [
    {"value": Relevance.MUST.value, "name": "MUST", "key": "m", "grade": RELEVANCE_GRADE[Relevance.MUST], "colour": "#15803d"},
    {"value": Relevance.SHOULD.value, "name": "SHOULD", "key": "s", "grade": RELEVANCE_GRADE[Relevance.SHOULD], "colour": "#2563eb"},
    {"value": Relevance.CAN.value, "name": "CAN", "key": "c", "grade": RELEVANCE_GRADE[Relevance.CAN], "colour": "#b45309"},
]
REMOVED = {"value": "removed", "name": "removed", "key": "x", "grade": 0, "colour": "#6b7280"}

# Transitions between consecutive kept passages: value, name, key (after `t`), colour.
TRANSITIONS = [
    {"value": Transition.SAME.value, "name": "Same topic", "key": "1", "colour": "#15803d"},
    {"value": Transition.COHERENT.value, "name": "Coherent transition", "key": "2", "colour": "#2563eb"},
    {"value": Transition.SWITCH.value, "name": "Topic switch", "key": "3", "colour": "#b91c1c"},
]

# The plot page's graded answer when a campaign sets none: [value, label], best first.
DEFAULT_PLOT_SCALE = [[2, "Describes it"], [1, "Partly"], [0, "Does not"]]

# An ad hoc grade's values: 0 to 9, one digit key each. The one bound a campaign's scale (annotation.services.adhoc.
# check_scale), the save path (assessments.services.judging) and adjudication all take.
ADHOC_GRADE_MAX = 9

# An ad hoc campaign's graded scales: [value, name, one line saying when it applies], best first. TREC Deep
# Learning's 0-3 is the default; binary and Robust-style 0-2 are one setting away (settings["grade_scale"]: a preset
# name, or a list of [value, name, description] of the campaign's own).
ADHOC_SCALES = {
    "dl": [[3, "Perfectly relevant", "The document is dedicated to the query; it is worthy of being a top result."],
           [2, "Highly relevant", "The content has some answer for the query, which may be a bit unclear or hidden."],
           [1, "Related", "The document seems related to the query but does not answer it."],
           [0, "Irrelevant", "The document has nothing to do with the query."]],
    "robust": [[2, "Highly relevant", "The document is about the topic and satisfies the narrative's demands."],
               [1, "Relevant", "Some of the document is relevant, as the narrative says."],
               [0, "Not relevant", "Nothing in the document is relevant to the topic."]],
    "binary": [[1, "Relevant", "Any part of the document is relevant, as the narrative says."],
               [0, "Not relevant", "Nothing in the document is relevant."]],
}
DEFAULT_ADHOC_SCALE = "dl"

# Page-level grades of outline judging (qrels), best first, as charts and adjudication name them.
OUTLINE_GRADES = [(r["grade"], r["name"]) for r in RELEVANCE] + [(0, "removed")]
GRADE_NAMES = {**{r["grade"]: r["name"] for r in RELEVANCE}, 0: "removed / not relevant",
               RELEVANCE_GRADE[Relevance.TRASH]: "TRASH"}
TRANSITION_NAMES = {t["value"]: t["name"] for t in TRANSITIONS}


class _Ordinal(models.TextChoices):
    """Labels declared best first, on an ordinal scale: `rank` is a label's place on it, the worst 0."""

    @property
    def rank(self) -> int:
        members = list(type(self))
        return len(members) - 1 - members.index(self)

    @classmethod
    def ranks(cls) -> dict[str, int]:
        """{value: rank}, worst first (a tie of the majority takes the lower; agreement's ordinal scale)."""
        return {member.value: member.rank for member in reversed(cls)}


class NuggetSupport(_Ordinal):
    """A nugget's support in an answer (layer nugget_support; the nuggetizer's `assignment`), best first. The values
    are stored and written to files as they are; the labels are what the nugget support page shows."""

    SUPPORT = "support", "Support"
    PARTIAL = "partial_support", "Partial support"
    NOT_SUPPORT = "not_support", "No support"


class CitationSupport(_Ordinal):
    """A cited passage's support of the sentence citing it (layer citation_support), best first. The values are
    stored as they are; the labels are what the citation support page shows."""

    FULL = "full", "Full support"
    PARTIAL = "partial", "Partial support"
    NONE = "none", "No support"


# The support pages' label sets, given to their script as data: [value, name, key], best first.
NUGGET_SUPPORT_KEYS = {NuggetSupport.SUPPORT: "s", NuggetSupport.PARTIAL: "p", NuggetSupport.NOT_SUPPORT: "n"}
CITATION_SUPPORT_KEYS = {CitationSupport.FULL: "f", CitationSupport.PARTIAL: "p", CitationSupport.NONE: "n"}
NUGGET_SUPPORT = [[m.value, m.label, NUGGET_SUPPORT_KEYS[m]] for m in NuggetSupport]
CITATION_SUPPORT = [[m.value, m.label, CITATION_SUPPORT_KEYS[m]] for m in CitationSupport]
# A support label's name in adjudication and review (the page's name in lower case), best first.
NUGGET_SUPPORT_NAMES = {m.value: m.label.lower() for m in NuggetSupport}
CITATION_SUPPORT_NAMES = {m.value: m.label.lower() for m in CitationSupport}
# What review and the label browser say of a nugget an answer supports: "<nugget>: supported by the answer".
NUGGET_SUPPORT_SAID = {NuggetSupport.SUPPORT.value: "supported", NuggetSupport.PARTIAL.value: "partly supported",
                       NuggetSupport.NOT_SUPPORT.value: "not supported"}


def outline_labels() -> dict:
    """The outline page's label sets, given to its script as data."""
    return {"relevance": RELEVANCE, "removed": REMOVED, "transitions": TRANSITIONS}


def plot_grade_names(scale=None) -> dict:
    """{grade: name} of a plot scale (default: DEFAULT_PLOT_SCALE)."""
    return {value: name for value, name in (scale or DEFAULT_PLOT_SCALE)}
