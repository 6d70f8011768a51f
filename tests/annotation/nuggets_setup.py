"""A nuggets campaign to judge (issue 29, part 2): one topic, two runs' answers citing passages of the collection, the
topic's bank of four nuggets (two vital), and the campaign assigned to one assessor: a nugget support unit per
answer. The run names are secrets the assessor's page must never show."""

import tempfile
from pathlib import Path

from annotation.models import Assignment
from annotation.services.assignment import assign_campaign
from annotation.services.campaigns import create_campaign
from annotation.services.nuggets import import_answers_file, import_banks_file
from assessments.models import Answer, Topic
from assessments.services import nuggets
from retrieval.models import Collection
from tests import factories
from tests.assessments.test_nuggets import answer, line

TOPIC = "2024-145979"
QUERY = "what is vicarious trauma and how can it be coped with"
RUNS = ("secretrun-alpha", "secretrun-beta")
DOCS = [
    ("msmarco_v2.1_doc_00_100#0_200", "Vicarious trauma explained", "Vicarious trauma is the emotional residue of exposure."),
    ("msmarco_v2.1_doc_01_110#1_210", "Coping with secondary stress", "Supervision and peer support help helpers cope."),
    ("msmarco_v2.1_doc_02_120#2_220", "Helpers at risk", "Therapists and nurses are most exposed."),
]
SENTENCES = {
    RUNS[0]: [("Vicarious trauma is the emotional residue of exposure to others' trauma.", [0]),
              ("Supervision and self-care help people cope with it.", [1, 0])],
    RUNS[1]: [("It mostly affects therapists.", [0])],
}
REFERENCES = {RUNS[0]: [DOCS[0][0], DOCS[1][0]], RUNS[1]: [DOCS[2][0]]}
BANK = [
    ("Vicarious trauma is indirect exposure to trauma", "vital"),
    ("Coping includes self-care", "vital"),
    ("Supervision helps", "okay"),
    ("It affects therapists", "okay"),
]


def _file(text):
    handle = tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False)
    handle.write(text)
    handle.close()
    return Path(handle.name)


def nuggets_world(*assessors, bank=True):
    """The campaign with its answers, its bank imported unless `bank` is False (the topic then has none), and
    assigned to `assessors` (stage support)."""
    coll = factories.collection("msmarco-v21-nuggets", kind=Collection.Kind.DOCUMENTS)
    factories.topic(coll, TOPIC, kind=Topic.Kind.ADHOC, title=QUERY)
    for docid, title, text in DOCS:
        factories.passage(coll, docid, text=text, title=title)
    campaign = create_campaign(name="rag-judging", task="nuggets", topics=[TOPIC])
    answers = "\n".join(answer(run, TOPIC, REFERENCES[run], *SENTENCES[run], topic=QUERY) for run in RUNS) + "\n"
    import_answers_file(campaign, _file(answers))
    if bank:
        bank = line(qid=TOPIC, query=QUERY, nuggets=[{"text": t, "importance": i} for t, i in BANK]) + "\n"
        import_banks_file(campaign, _file(bank))
    if assessors:
        assign_campaign(campaign, [a.username for a in assessors])
    stored = nuggets.topic_banks(campaign.pk)
    answer_rows = {a.run.name: a for a in Answer.objects.filter(campaign_id=campaign.pk).select_related("run")}
    units = {run: Assignment.objects.filter(campaign=campaign, run=answer_rows[run].run).first() for run in RUNS}
    return {"campaign": campaign, "answers": answer_rows, "units": units,
            "bank": next(iter(stored.values())).value if stored else None}


def reviewed_world(judge="nugget-judge", reviewer="nugget-reviewer"):
    """nuggets_world with its assessor `judge` (the campaign assigned to them) and a reviewer, in their groups."""
    from annotation.roles import Role, ensure_groups

    groups = ensure_groups()
    judging = factories.user(judge)
    judging.groups.add(groups[Role.ASSESSOR])
    reviewing = factories.user(reviewer)
    reviewing.groups.add(groups[Role.REVIEWER])
    found = nuggets_world(judging)
    found.update(judge=judging, reviewer=reviewing)
    return found
