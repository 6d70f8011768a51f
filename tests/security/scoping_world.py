"""Two campaigns for the scoping audit (tests/security/test_scoping_audit.py): an ad hoc campaign `alpha-adhoc`
whose runs, teams and topics carry distinctive strings, and the TREC RAG nuggets campaign of
tests/annotation/nuggets_setup.py (`rag-judging`, runs secretrun-alpha and secretrun-beta), both assigned to the
same two assessors; tokens scoped to each campaign, unscoped participant tokens of two teams.

Every distinctive string of a campaign is in SECRETS[campaign]: a response to a caller limited to the other
campaign must contain none of them; RUN_NAMES must never reach an assessor's browser."""

from django.apps import apps

from annotation.models import Assignment
from annotation.roles import Role, ensure_groups
from annotation.services.assignment import assign_campaign
from annotation.services.campaigns import create_campaign, create_pool
from annotation.services.submissions import upload_run
from annotation.services.tokens import issue_token
from assessments.services.pooling import assemble_pool
from assessments.models import MachineJob, MachineLabelSource, Pool, Qrel, QrelSet, Topic
from retrieval.models import Collection
from tests import factories
from tests.annotation import nuggets_setup

A, B = "alpha-adhoc", "rag-judging"  # B: nuggets_setup.nuggets_world's campaign
A_RUNS = ("SECRETRUN-xyz", "SECRETRUN-qrs")
A_TEAMS = ("SECRETTEAM-ada", "SECRETTEAM-bob")
A_TOPICS = {"401": "ALPHATOPIC windmills", "402": "ALPHATOPIC tidal power"}
A_DOCS = {f"ALPHADOC-{n}": f"ALPHATEXT about windmills number {n}." for n in range(1, 6)}
A_POOL = "alpha-pool"
A_QRELS = "alpha-official-qrels"
A_SOURCE = "ALPHASOURCE-annotator"
B_SOURCE = "BETASOURCE-annotator"
RUN_NAMES = A_RUNS + nuggets_setup.RUNS
TEAM_NAMES = A_TEAMS
SECRETS = {
    A: (A, *A_RUNS, *A_TEAMS, *A_TOPICS.values(), "ALPHADOC-", "ALPHATEXT", A_POOL, A_QRELS, A_SOURCE),
    B: (B, *nuggets_setup.RUNS, nuggets_setup.QUERY, nuggets_setup.TOPIC, "msmarco_v2.1_doc_0",
        nuggets_setup.BANK[0][0], B_SOURCE),
}


def build():
    """The two campaigns, their people and tokens; returns a dict of what URLs and bodies name."""
    groups = ensure_groups()
    people = {}
    for name, role in (("judge-one", Role.ASSESSOR), ("judge-two", Role.ASSESSOR), ("boss", Role.ORGANISER)):
        user = factories.user(name, is_staff=role == Role.ORGANISER)
        user.groups.add(groups[role])
        people[name] = user

    coll = factories.collection("alpha-web", kind=Collection.Kind.DOCUMENTS)
    for qid, title in A_TOPICS.items():
        factories.topic(coll, qid, kind=Topic.Kind.ADHOC, title=title, text=f"What about {title}?")
    for docid, text in A_DOCS.items():
        factories.passage(coll, docid, text=text, title=f"{docid} title")
    alpha = create_campaign(name=A, task="adhoc", topics=list(A_TOPICS))
    tokens = {}
    for team in A_TEAMS:
        tokens[team] = issue_token(username=team, role="participant")[1]
    team_users = {u.username: u for u in apps.get_model("auth", "User").objects.filter(username__in=A_TEAMS)}
    runs = {}
    for team, run_name in zip(A_TEAMS, A_RUNS):
        lines = "".join(f"{qid} Q0 {docid} {rank} {10 - rank} {run_name}\n"
                        for qid in A_TOPICS for rank, docid in enumerate(A_DOCS, start=1))
        runs[run_name] = upload_run(campaign=alpha, owner=team_users[team], data=lines.encode())
    pool = create_pool(campaign=alpha, name=A_POOL, runs=[r.pk for r in runs.values()], depth=5)
    pool = assemble_pool(pool.pk)  # the build queued after the commit, which a test's transaction never makes
    assert pool.status == Pool.Status.READY, pool.status
    assign_campaign(alpha, ["judge-one", "judge-two"], pools=[pool.pk], overlap=2)
    qrel_set = QrelSet.objects.create(name=A_QRELS, collection=coll)
    Qrel.objects.create(qrel_set=qrel_set, topic=Topic.objects.get(external_id="401"),
                        passage=coll.passages.get(external_id="ALPHADOC-1"), grade=1)
    a_source = MachineLabelSource.objects.create(name=A_SOURCE, kind="classifier", collection=coll,
                                                 campaign_id=alpha.pk, status="ready", grades=[0, 1])
    a_job = MachineJob.objects.create(source=a_source, kind="label", status="running", items_total=4)

    rag = nuggets_setup.nuggets_world()
    beta = rag["campaign"]
    assign_campaign(beta, ["judge-one", "judge-two"], overlap=2)  # both judge every answer
    assign_campaign(beta, ["judge-one", "judge-two"], overlap=2, stage="citations")  # and every answer's citations
    b_coll = Collection.objects.get(name="msmarco-v21-nuggets")
    b_source = MachineLabelSource.objects.create(name=B_SOURCE, kind="classifier", collection=b_coll,
                                                 campaign_id=beta.pk, status="ready", grades=[0, 1])
    b_job = MachineJob.objects.create(source=b_source, kind="label", status="running", items_total=4)
    b_run = next(iter(rag["answers"].values())).run

    tokens["org-A"] = issue_token(username="boss", role="organiser", campaign=A)[1]
    tokens["org-B"] = issue_token(username="boss", role="organiser", campaign=B)[1]
    tokens["part-A"] = issue_token(username=A_TEAMS[0], role="participant", campaign=A)[1]
    units = {
        (c, who): list(Assignment.objects.filter(campaign__name=c, assessor__username=who).order_by("pk"))
        for c in (A, B) for who in ("judge-one", "judge-two")
    }
    return {
        "people": people, "tokens": tokens, "runs": runs, "b_run": b_run, "pool": pool, "qrel_set": qrel_set,
        "jobs": {A: a_job, B: b_job}, "sources": {A: a_source, B: b_source}, "campaigns": {A: alpha, B: beta},
        "units": units, "rag": rag,
    }


def snapshot():
    """Every row of the project's apps (and the users): equal snapshots mean nothing was written or changed."""
    rows = {}
    for label in ("retrieval", "assessments", "annotation", "auth"):
        for model in apps.get_app_config(label).get_models():
            values = list(model.objects.order_by("pk").values())
            for row in values:  # when a token was last used is bookkeeping, not data
                row.pop("last_used_at", None)
                row.pop("last_login", None)
            rows[model._meta.label] = values
    return rows
