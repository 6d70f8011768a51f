"""manage.py create_campaign NAME --task outline|plot|adhoc [--topics ID ...] [--collection C] [--title T]
[--max-runs N] [--max-per-topic N]"""

from django.core.management.base import BaseCommand, CommandError

from annotation.services.campaigns import CampaignError, create_campaign
from annotation.models import Campaign, Track


class Command(BaseCommand):
    help = (
        "Make a campaign that participants upload runs to (POST /api/runs/). Its track is the topics runs may "
        "name: by default every topic of the task's kind, which must all be in one collection (give "
        "--collection when they are not). Outline campaigns take TREC CAR Y3 JSON lines; plot and ad hoc "
        "campaigns TREC six-column runs."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="Short name (letters, digits, - and _); uploads name it.")
        parser.add_argument("--task", required=True, choices=Campaign.Task.values)
        parser.add_argument(
            "--topics", "--topic", dest="topics", nargs="+", action="extend", default=[], metavar="ID",
            help="Only these topics (external ids).",
        )
        parser.add_argument("--collection", help="Collection of the topics.")
        parser.add_argument("--title", default="", help="A longer title.")
        parser.add_argument(
            "--max-runs", type=int, metavar="N",
            help="Runs one participant may upload (default: the API_MAX_RUNS_PER_PARTICIPANT setting).",
        )
        parser.add_argument(
            "--max-per-topic", type=int, metavar="N",
            help="Passages a run may give a topic (default: 20 for outline articles, as in Y3; 1000 for TREC runs).",
        )

    def handle(self, *args, **options):
        for option in ("max_runs", "max_per_topic"):
            if options[option] is not None and not 1 <= options[option] <= Track.LIMIT_MAX:
                raise CommandError(f"--{option.replace('_', '-')} must be from 1 to {Track.LIMIT_MAX}")
        try:
            campaign = create_campaign(
                name=options["name"], task=options["task"], topics=options["topics"],
                collection=options["collection"], title=options["title"], max_runs=options["max_runs"],
                max_per_topic=options["max_per_topic"],
            )
        except CampaignError as exc:
            raise CommandError(str(exc)) from exc
        track = campaign.track
        self.stdout.write(
            f"Campaign {campaign.name!r} ({campaign.get_task_display()}) takes runs for {track.topics.count():,} "
            f"topics of collection {track.collection.name!r}."
        )
