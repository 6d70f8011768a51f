"""Agreement report speed: campaign_report on judgements in the database against krippendorff.alpha alone.

    .venv/bin/python benchmarks/bench_agreement.py [--units 100000] [--assessors 3] [--layer plot_grade|relevance]
        [--repeat 3] [--use-database-url]

Builds a throwaway database (a SQLite file in a temporary directory; with --use-database-url a test
database beside DATABASE_URL's, created and dropped by Django), and a campaign whose assessors each
label every unit (topics of 1,000 passages): plot grades 0-3, or outline relevance (facet judgements
MUST/SHOULD/CAN, and 10% of the passages removed), each assessor agreeing with a shared truth 70%
of the time. Rows are bulk-inserted (no model instances). Then, in the same run, times:

- report: annotation.reports.agreement.campaign_report for the layer: the query, the units × assessors
  matrix, α, Fleiss' κ, all/none agree, every pair's Cohen's κ, weighted κ and confusion matrix,
  the same per topic, and the ranking-stability step (no runs here);
- alpha: krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal") on the
  prepared assessors × units matrix (NaN for missing), the package's own cost of the headline figure.

Prints both (fastest of --repeat), a breakdown of the report (the rows as the driver gives them, one
Python tuple each; the same integers as the report reads them, packed by the database into one text
per column and parsed by numpy; query + matrix; figures), and the ratios. Aim: the report within 3x
of alpha; the breakdown says where the time goes.
Not part of the test suite.
"""

import argparse
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_export import BulkWriter, measure, throwaway_database  # noqa: E402  (shared with the export benchmark)

PASSAGES_PER_TOPIC = 1000
AGREE = 0.7  # chance that an assessor gives the shared true label


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=100_000, help="How many units (passages) every assessor labels.")
    parser.add_argument("--assessors", type=int, default=3)
    parser.add_argument("--layer", choices=("plot_grade", "relevance"), default="plot_grade")
    parser.add_argument("--repeat", type=int, default=3, help="Time each phase this often, keep the fastest.")
    parser.add_argument(
        "--use-database-url", action="store_true",
        help="Use a throwaway test database on DATABASE_URL's server instead of a temporary SQLite file.",
    )
    args = parser.parse_args(argv)

    with throwaway_database("bench-agreement-", args.use_database_url) as (_, connection):
        started = time.perf_counter()
        campaign = populate(args.units, args.assessors, args.layer)
        print(f"database: {connection.vendor} ({connection.settings_dict['NAME']})")
        print(f"wrote {args.units:,} units x {args.assessors} assessors of {args.layer} "
              f"in {time.perf_counter() - started:.1f} s")
        run_phases(campaign, args.layer, args.repeat)


def populate(units, assessor_count, layer):
    """A campaign whose assessors each label `units` passages (topics of PASSAGES_PER_TOPIC); returns it."""
    from django.contrib.auth import get_user_model

    from annotation.models import Assignment, Campaign
    from assessments.models import Judgement, Layer, Pool, Topic
    from retrieval.models import Collection, Passage

    rng = random.Random(20261122)
    collection = Collection.objects.create(name="bench")
    task = Campaign.Task.PLOT if layer == "plot_grade" else Campaign.Task.OUTLINE
    campaign = Campaign.objects.create(name="bench", task=task)
    pool = Pool.objects.create(name="bench", collection=collection)  # the unit judged: a pool's candidates
    campaign.pools.add(pool)
    users = [get_user_model().objects.create(username=f"assessor{i + 1}") for i in range(assessor_count)]
    moment = datetime(2026, 11, 22, tzinfo=UTC)
    writer = BulkWriter()
    relevance = {3: "must", 2: "should", 1: "can"}
    made = passage_id = 0
    for t in range((units + PASSAGES_PER_TOPIC - 1) // PASSAGES_PER_TOPIC):
        topic = Topic.objects.create(collection=collection, external_id=f"T{t:04d}",
                                     kind=Topic.Kind.PLOT if layer == "plot_grade" else Topic.Kind.OUTLINE)
        Assignment.objects.bulk_create(Assignment(campaign=campaign, assessor=u, topic=topic, token=f"{t}-{u.pk}",
                                                  pool=pool, kind=Assignment.Kind.PLOT_LABELS) for u in users)
        count = min(PASSAGES_PER_TOPIC, units - t * PASSAGES_PER_TOPIC)
        for _ in range(count):
            passage_id += 1
            writer.add(Passage, id=passage_id, collection_id=collection.pk, external_id=f"p{passage_id}", title="",
                       text="", metadata={}, created_at=moment)
            truth = rng.randrange(4) if layer == "plot_grade" else rng.choice((0, 1, 2, 2, 3, 3, 3, 3, 3, 3))
            for user in users:
                grade = truth if rng.random() < AGREE else rng.randrange(4)
                if layer == "plot_grade":
                    kind, value = Layer.PLOT_GRADE, grade
                elif grade == 0:
                    kind, value = Layer.REMOVAL, True
                else:
                    kind, value = Layer.FACET, [{"facet": "other", "relevance": relevance[grade]}]
                made += 1
                writer.add(
                    Judgement, id=made, assessor_id=user.pk, layer=str(kind.value), topic_id=topic.pk,
                    passage_id=passage_id, passage2_id=None, item="",
                    key=Judgement.make_key(kind, topic.pk, passage_id, campaign_id=campaign.pk), campaign_id=campaign.pk,
                    value=value, grade=grade, run_ids=[],
                    client_time=moment, client_seq=0, updated_at=moment, adjudicated=False,
                )
    writer.flush()
    return campaign


def run_phases(campaign, layer, repeat):
    import krippendorff
    import numpy as np
    from django.contrib.auth import get_user_model

    from annotation.reports.agreement import campaign_judgements, campaign_report
    from assessments.agreement import judgements as layers_of
    from assessments.agreement.statistics import figures
    from assessments.exporters.common import raw_rows

    report = campaign_report(campaign, layers=[layer])  # warm up, and the figures to print
    usernames = dict(get_user_model().objects.values_list("pk", "username"))
    judgements, _ = campaign_judgements(campaign)
    ratings = layers_of.layer_ratings(judgements, layer, usernames)[0]
    matrix = np.where(np.isnan(ratings.codes), np.nan, np.asarray(ratings.labels, float)[
        np.nan_to_num(ratings.codes).astype(np.int64)])  # assessors × units of the grades themselves
    scale = ratings.labels

    def alpha():
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=scale)

    stored = ("plot_grade",) if layer == "plot_grade" else ("facet", "removal")
    graded = judgements.filter(layer__in=stored, grade__isnull=False)
    columns = ("topic_id", "passage_id", "assessor_id", "grade")

    def fetch():  # the rows the matrix is built from, as the driver gives them (a tuple per row)
        for _ in raw_rows(graded.values_list(*columns), 10_000):
            pass

    def packed():  # the same integers as the report reads them: one text per column, parsed by numpy
        layers_of._int_rows(graded, columns)

    report_time = measure(lambda: campaign_report(campaign, layers=[layer]), repeat)
    alpha_time = measure(alpha, repeat)
    fetch_time = measure(fetch, repeat)
    packed_time = measure(packed, repeat)
    matrix_time = measure(lambda: layers_of.layer_ratings(judgements, layer, usernames), repeat)
    figures_time = measure(lambda: figures(ratings), repeat)

    entry = report["layers"][0]
    print(f"{layer}: {entry['units']:,} units, {entry['assessors']} assessors, {len(entry['topics'])} topics; "
          f"alpha {entry['alpha']:.4f} (package on the matrix: "
          f"{krippendorff.alpha(reliability_data=matrix, level_of_measurement='ordinal', value_domain=scale):.4f}), "
          f"Fleiss {entry['fleiss_kappa']:.4f}")
    print(f"  report (campaign_report)   wall {report_time.wall:7.3f} s   cpu {report_time.cpu:7.3f} s   "
          f"peak memory {report_time.peak}")
    print(f"    rows from the database   wall {fetch_time.wall:7.3f} s   cpu {fetch_time.cpu:7.3f} s   "
          "(the same rows straight from the driver, a tuple each)")
    print(f"    rows packed by database  wall {packed_time.wall:7.3f} s   cpu {packed_time.cpu:7.3f} s   "
          "(the report's read: one text per column, parsed by numpy)")
    print(f"    query + matrix           wall {matrix_time.wall:7.3f} s   cpu {matrix_time.cpu:7.3f} s")
    print(f"    overall figures + pairs  wall {figures_time.wall:7.3f} s   cpu {figures_time.cpu:7.3f} s")
    print(f"  krippendorff.alpha         wall {alpha_time.wall:7.3f} s   cpu {alpha_time.cpu:7.3f} s")
    print(f"  ratio report / alpha       wall {report_time.wall / alpha_time.wall:7.2f}x   "
          f"cpu {report_time.cpu / alpha_time.cpu:7.2f}x   (aim: within 3x)")
    print(f"  ratio rows alone / alpha   wall {fetch_time.wall / alpha_time.wall:7.2f}x   "
          f"cpu {fetch_time.cpu / alpha_time.cpu:7.2f}x")
    print(f"  ratio rows packed / alpha  wall {packed_time.wall / alpha_time.wall:7.2f}x   "
          f"cpu {packed_time.cpu / alpha_time.cpu:7.2f}x")


if __name__ == "__main__":
    main()
