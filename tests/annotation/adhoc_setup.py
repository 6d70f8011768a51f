"""An ad hoc campaign on a small TREC-like collection for the ad hoc page's tests: one topic with a title,
description and narrative, three documents with titles and paragraphs, a pool of them, one assessor's unit."""

from annotation.models import Campaign
from assessments.models import Pool, PoolCandidate, Topic
from tests import factories

NARRATIVE = "A relevant document names a proposal for a new wind farm and where it would be built."
DOCUMENTS = [
    ("LA010189-0001", "Offshore wind proposals draw fire",
     "Fishermen opposed two proposals for offshore wind farms on Tuesday.\n\nThe county will vote in March."),
    ("LA010189-0002", "Harbour dredging delayed",
     "The harbour board delayed dredging again.\n\nNo date was set."),
    ("FBIS3-10082", "Wind farm proposed near Aberdeen",
     "A company proposed a wind farm of forty turbines near Aberdeen.\n\nThe proposal needs planning consent."),
]


def adhoc_world(assessor, *, name="adhoc-trec", settings=None, topic_id="301"):
    coll = factories.collection("trec-news", kind="documents")
    topic = factories.topic(coll, topic_id, kind=Topic.Kind.ADHOC, title="wind farm proposals",
                            metadata={"description": "Find reports of proposed wind farms.", "narrative": NARRATIVE})
    docs = [factories.passage(coll, docid, title=title, text=text) for docid, title, text in DOCUMENTS]
    pool = Pool.objects.create(name=f"{name}-pool", collection=coll, status=Pool.Status.READY)
    pool.topics.set([topic])
    PoolCandidate.objects.bulk_create(PoolCandidate(pool=pool, topic=topic, passage=d, rank=r)
                                      for r, d in enumerate(docs, start=1))
    campaign = factories.campaign(name, Campaign.Task.ADHOC, settings=settings or {})
    unit = factories.assignment(assessor, topic, pool=pool, campaign=campaign)
    return {"collection": coll, "topic": topic, "documents": docs, "pool": pool, "campaign": campaign, "unit": unit}
