"""manage.py machine_report --source ID (--campaign NAME | --qrels NAME) [--pool P] [--human-topics ID…]
[--measure M] [--audit N] [--format text|json]: how a machine label source compares with people."""

import json

from django.core.management.base import BaseCommand, CommandError

from assessments.campaign_link import campaign_named
from assessments.evaluation import parse_measure
from assessments.evaluation.sources import stored_qrels
from assessments.machine import compare
from assessments.machine.commands import number
from assessments.models import MachineLabelSource, Pool, QrelSet, Topic
from assessments.models.machine import several_sources


class Command(BaseCommand):
    help = (
        "Compare a machine label source with people: Cohen's κ and the confusion matrix on the items both labelled "
        "(never its training pairs), per topic; the runs ranked by a measure with the human qrels and with the machine "
        "and the filled qrels (Kendall's τ, the largest rank change); the anchoring effect where a campaign showed "
        "pre-labels; a sample of disagreements to review."
    )

    def add_arguments(self, parser):
        parser.add_argument("--source", required=True, help="The machine label source (id or name).")
        parser.add_argument("--campaign", help="The people are this campaign's assessors (majority).")
        parser.add_argument("--qrels", metavar="NAME", help="The people are a stored qrel set (e.g. Cranfield's).")
        parser.add_argument("--pool", help="Only this pool's topics; its runs are ranked.")
        parser.add_argument("--human-topics", nargs="+", default=None, metavar="ID",
                            help="With --qrels: the topics people judged; filled takes their labels there and the "
                            "machine's elsewhere, and the human share alone is ranked too.")
        parser.add_argument("--measure", help="Ranking measure (default nDCG@20 for outlines, nDCG@10 otherwise).")
        parser.add_argument("--threshold", type=int, help="A human grade at least this is relevant (default: the "
                            "annotator's, else 1).")
        parser.add_argument("--audit", type=int, default=20, help="Disagreements to list (default 20).")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args, **options):
        text = options["source"]
        found = MachineLabelSource.objects.named(text)  # digits are an id (no source is named with digits only)
        if not found:
            raise CommandError(f"--source: no machine label source {text[:100]!r}")
        if len(found) > 1:
            raise CommandError(f"--source: {several_sources(text, found)}")
        source = found[0]
        if bool(options["campaign"]) == bool(options["qrels"]):
            raise CommandError("give --campaign NAME or --qrels NAME: whose labels are the people's")
        pool = None
        if options["pool"]:
            pool = Pool.objects.filter(name=options["pool"], collection=source.collection).first()
            if pool is None:
                raise CommandError(f"--pool: no pool {options['pool']!r} in {source.collection.name!r}")
        topic_ids = set(pool.topics.values_list("pk", flat=True)) if pool else None
        run_ids = compare.pool_run_ids([pool.pk]) if pool else set()
        campaign_id = None
        if options["campaign"]:
            campaign = campaign_named(options["campaign"])
            if campaign is None:
                raise CommandError(f"--campaign: no campaign named {options['campaign']!r}")
            campaign_id = campaign.pk
            if not pool:
                run_ids = compare.pool_run_ids(campaign.pools.values_list("pk", flat=True)) | set(
                    campaign.assignments.filter(run__isnull=False).values_list("run_id", flat=True))
                run_ids.discard(None)
            human = compare.campaign_human(campaign.pk, source.collection, topic_ids)
        else:
            qrel_set = QrelSet.objects.filter(name=options["qrels"]).first()
            if qrel_set is None:
                raise CommandError(f"--qrels: no qrel set named {options['qrels']!r}")
            names = None if topic_ids is None else set(Topic.objects.filter(pk__in=topic_ids)
                                                       .values_list("external_id", flat=True))
            human = {k: g for k, g in compare.flat(stored_qrels(qrel_set)).items() if names is None or k[0] in names}
        kind = Topic.objects.filter(collection=source.collection).values_list("kind", flat=True).first()
        measure = parse_measure(options["measure"] or ("nDCG@20" if kind == Topic.Kind.OUTLINE else "nDCG@10"))
        runs = compare.stored_runs(run_ids, topic_ids)
        report = compare.source_report(source, human, runs, measure, topic_ids=topic_ids,
                                       human_topics=options["human_topics"], threshold=options["threshold"],
                                       campaign_id=campaign_id, audit=options["audit"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=1, default=str))
        else:
            self.stdout.write(as_text(report))


def as_text(report) -> str:
    a = report["agreement"]
    lines = [f"{report['name']} (#{report['source']}, {report['kind']}, {report['model']}): {report['labels']:,} "
             f"labels, {report['unreadable']:,} unreadable"]
    if report["cross_validation"]:
        cv = report["cross_validation"]
        lines.append("cross-validation (mean over folds): " + ", ".join(
            f"{k} {number(cv[k])}" for k in ("precision", "recall", "f1", "auc", "kappa"))
            + f"; human–human κ {number(report['human_kappa'])}")
    lines.append(f"against people on {a['items']:,} items ({'relevant or not' if a['binary'] else 'grades'}): "
                 f"κ {number(a['kappa'])}" + (f" ({a['reason']})" if a["reason"] else "")
                 + (f", weighted κ {number(a.get('weighted_kappa'))}, binary κ {number(a.get('binary_kappa'))}"
                    if not a["binary"] else "") + f", agreement {number(a['agree'])}")
    labels = a["confusion"]["labels"]
    lines.append("confusion (rows people, columns machine): " + " ".join(str(x) for x in labels))
    for label, row in zip(labels, a["confusion"]["matrix"]):
        lines.append(f"  {label}: " + " ".join(f"{n:>6}" for n in row))
    kappas = [t["kappa"] for t in a["topics"] if t["kappa"] is not None]
    if kappas:
        kappas.sort()
        lines.append(f"per topic: {len(a['topics'])} topics, κ median {number(kappas[len(kappas) // 2])}, "
                     f"lowest {number(kappas[0])}, highest {number(kappas[-1])}")
    r = report["rankings"]
    lines.append(f"system ranking by {r['measure']} over {r['runs']} runs ({r['reference_topics']} topics with human "
                 "qrels):")
    for row in r["rows"]:
        largest = row["largest"]
        moved = f"; largest change {largest['run']} {largest['from']} → {largest['to']}" if largest else ""
        lines.append(f"  {row['qrels']} ({row['topics']} topics): τ {number(row['tau'])}{moved}")
    if report["anchoring"] and any(v["items"] for v in report["anchoring"].values()):
        an = report["anchoring"]
        lines.append(f"agreement with the machine: shown {number(an['shown']['agree'])} ({an['shown']['items']} items),"
                     f" blind {number(an['blind']['agree'])} ({an['blind']['items']} items)")
    lines.append(f"disagreements: {report['audit']['disagreeing']:,}; a sample to review:")
    for item in report["audit"]["sample"]:
        lines.append(f"  {item['topic']} {item['docid']} people {item['human']} machine {item['machine']}"
                     + (f" (score {item['score']:.3f})" if item["score"] is not None else ""))
    return "\n".join(lines)
