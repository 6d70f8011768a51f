"""manage.py assign_campaign CAMPAIGN --assessors U1 U2 ... [--overlap K] [--topic-overlap T=K ...]
[--qualification-topics T ...] [--qualification-gold QRELSET] [--pool P ...] [--seed S]
[--likely-source ID [--likely-threshold SCORE] [--likely-extra N]]"""

from django.core.management.base import BaseCommand, CommandError

from annotation.services.assignment import NUGGET_STAGES, AssignmentError, assign_campaign, parse_topic_overlap
from annotation.services.triage import LikelyRelevant
from annotation.models import Campaign
from assessments.models import Pool


class Command(BaseCommand):
    help = (
        "Give a campaign's work units (outline: a topic's run articles; plot: a query's pool candidates) to assessors, "
        "K per unit, balanced and deterministic given --seed. A topic's assessors get all of its units (judgements are "
        "keyed on topic and passage); an assessor who has judged a topic keeps it. Running it again adds only what "
        "is missing. Settings given here are stored on the campaign. See annotation/assignment.py."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="Campaign name.")
        parser.add_argument("--assessors", nargs="+", required=True, metavar="USER", help="Usernames of the assessors.")
        parser.add_argument("--overlap", type=int, metavar="K", help="Assessors per unit (stored; default: the campaign's, 1).")
        parser.add_argument(
            "--topic-overlap", nargs="+", action="extend", default=[], metavar="T=K",
            help="A topic's own overlap (external id = K, or =all for every assessor named).",
        )
        parser.add_argument(
            "--qualification-topics", nargs="+", action="extend", default=[], metavar="T",
            help="Topics every assessor judges first, scored against --qualification-gold.",
        )
        parser.add_argument("--qualification-gold", metavar="QRELSET", help="Qrel set with the known answers.")
        parser.add_argument("--pool", nargs="+", action="extend", default=[], metavar="P",
                            help="Add these pools to the campaign first.")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the tie-breaking order (default 0).")
        parser.add_argument("--likely-source", type=int, metavar="ID",
                            help="Triage: candidates this machine label source scores at least --likely-threshold go "
                            "to --likely-extra more assessors (pool-based campaigns; annotation/services/triage.py).")
        parser.add_argument("--likely-threshold", type=float, default=0.5, metavar="SCORE",
                            help="With --likely-source: a classifier's probability, an LLM's grade, or a zero-shot "
                            "source's grade (1: its top share of each topic) (default 0.5).")
        parser.add_argument("--likely-extra", type=int, default=1, metavar="N",
                            help="With --likely-source: extra assessors for each such candidate (default 1).")
        parser.add_argument("--stage", choices=NUGGET_STAGES,
                            help="A nuggets campaign: create (a unit per topic, to write its nuggets), support (a "
                            "unit per answer, to label its nuggets; the default) or citations (a unit per answer "
                            "that cites, to judge whether each cited passage supports its sentence: optional). "
                            "Stored on the campaign.")
        parser.add_argument("--no-progress", action="store_true", help="Do not print progress.")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(name=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"campaign: no campaign named {options['campaign']!r}")
        pools = []
        for name in options["pool"]:
            pool = Pool.objects.filter(name=name).first()
            if pool is None:
                raise CommandError(f"--pool: no pool named {name!r}")
            pools.append(pool)

        def progress(done, total):
            if not options["no_progress"] and (done == total or done % max(1, total // 10) == 0):
                self.stdout.write(f"  {done:,}/{total:,} topics")

        likely = None
        if options["likely_source"] is not None:
            likely = LikelyRelevant(options["likely_source"], options["likely_threshold"], options["likely_extra"])
        try:
            result = assign_campaign(
                campaign, options["assessors"], pools=pools, overlap=options["overlap"],
                topic_overlap=parse_topic_overlap(options["topic_overlap"]),
                qualification_topics=options["qualification_topics"],
                qualification_gold=options["qualification_gold"], seed=options["seed"], progress=progress,
                likely=likely, stage=options["stage"],
            )
        except AssignmentError as exc:
            raise CommandError(f"nothing was assigned: {exc.as_flag()}") from exc
        self.stdout.write(f"Campaign {campaign.name}: {result.summary()}")
