"""The fixtures of the machine-assistance tests (training and labelling, zero-shot sources, the console's Machine page
and its API), in one place: import the ones a test module uses (`# noqa: F401`), as pytest finds fixtures by the
names of its module. model_dir is autouse: importing it gives every test of the module its own annotators' folder."""

import pytest

from annotation.models import Campaign
from assessments.models import CandidateSource, Layer, Pool, PoolCandidate, Run, Topic
from tests import factories
from tests.retrieval.tiny_models import tiny_bert

RELEVANT = "the wing flutter of the model at supersonic speed was measured in the tunnel"
OTHER = "heat transfer in the laminar boundary layer of a flat plate with suction"
QUERIES = ["wing flutter at supersonic speed", "flutter of a wing in the tunnel", "supersonic wing flutter model",
           "wing flutter measured in a wind tunnel"]


@pytest.fixture(autouse=True)
def model_dir(settings, tmp_path):
    settings.MACHINE_MODEL_DIR = tmp_path / "annotators"
    return settings.MACHINE_MODEL_DIR


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny BERT (2 layers, 32 units) built from a config: a base model that trains in a second."""
    return tiny_bert(tmp_path_factory.mktemp("tiny") / "bert")


@pytest.fixture
def campaign():
    """Four ad hoc topics of ten candidates each in a pool of two runs; alice and bob grade the first eight of each
    (32 labels, the same items, so their κ exists), the last two are nobody's: what the annotator labels."""
    coll = factories.collection("aero")
    camp = factories.campaign("aero-judging", Campaign.Task.ADHOC)
    alice, bob = factories.user("alice"), factories.user("bob")
    topics = [factories.topic(coll, str(n), kind=Topic.Kind.ADHOC, text=q) for n, q in enumerate(QUERIES, start=1)]
    pool = Pool.objects.create(name="aero-pool", collection=coll, status=Pool.Status.READY)
    pool.topics.set(topics)
    runs = [Run.objects.create(collection=coll, name=name) for name in ("lexical", "dense")]
    for topic in topics:
        for rank in range(1, 11):
            relevant = rank % 2 == 1
            doc = factories.passage(coll, f"{topic.external_id}-d{rank}", text=f"{RELEVANT if relevant else OTHER} {rank}")
            candidate = PoolCandidate.objects.create(pool=pool, topic=topic, passage=doc, rank=rank)
            CandidateSource.objects.create(candidate=candidate, run=runs[0], rank=rank, score=20.0 - rank)
            CandidateSource.objects.create(candidate=candidate, run=runs[1], rank=11 - rank, score=0.1 * rank)
            if rank <= 8:
                for who in (alice, bob):
                    grade = 2 if relevant else 0
                    if who is bob and rank == 5:
                        grade = 0  # one disagreement a topic (the majority of a tie is the higher grade)
                    factories.judgement(who, topic, doc, layer=Layer.PLOT_GRADE, value=grade, campaign=camp)
    return camp


@pytest.fixture
def world(campaign):
    """The campaign with its pool, aero-pool: what its Machine page and the API label."""
    campaign.pools.add(Pool.objects.get(name="aero-pool"))
    return campaign
