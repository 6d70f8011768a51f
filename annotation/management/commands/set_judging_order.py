"""manage.py set_judging_order CAMPAIGN --order ORDER [--machine-source ID] [--hybrid-budget SHARE|COUNT]
[--target-recall R] [--judging-budget N] [--min-rel G] [--dry-run]"""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from annotation.services.campaign_settings import change_settings
from annotation.services.errors import ServiceError
from annotation.services.judging_order import ORDERS

FLAGS = {"judging_order": "--order", "machine_source": "--machine-source", "hybrid_budget": "--hybrid-budget",
         "target_recall": "--target-recall", "judging_budget": "--judging-budget", "judging_min_rel": "--min-rel"}


class Command(BaseCommand):
    help = (
        "Set a plot or ad hoc campaign's judging order, as its home's form and POST /api/campaigns/NAME/settings/ do "
        "(annotation.services.campaign_settings: the same checks and effects). The hybrid order needs a machine "
        "label source of the campaign's collection (its own or one made for no campaign) and a budget: a share of "
        "the pool (0.1 or 10%%) or a count of judgements (500). Prints what the change does, then applies it "
        "(--dry-run: prints only)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="Campaign name.")
        parser.add_argument("--order", required=True, choices=ORDERS, help="The judging order.")
        parser.add_argument("--machine-source", type=int, metavar="ID",
                            help="The machine label source (id) of the machine and hybrid orders (active's prior).")
        parser.add_argument("--hybrid-budget", metavar="SHARE|COUNT",
                            help="The hybrid order's budget on each pool: a share (0.1, 10%%) or a count (500).")
        parser.add_argument("--target-recall", type=float, metavar="R",
                            help="Stop a topic at this estimated recall (0-1, pessimistic end).")
        parser.add_argument("--judging-budget", type=int, metavar="N", help="Stop a topic after N judgements.")
        parser.add_argument("--min-rel", type=int, metavar="G", help="A grade at or above G is relevant (default 1).")
        parser.add_argument("--dry-run", action="store_true", help="Say what the change does; change nothing.")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(name=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign named {options['campaign']!r}")
        values = {"judging_order": options["order"], "machine_source": options["machine_source"],
                  "hybrid_budget": options["hybrid_budget"], "target_recall": options["target_recall"],
                  "judging_budget": options["judging_budget"], "judging_min_rel": options["min_rel"]}
        try:
            preview = change_settings(campaign, **values)
            done = preview if options["dry_run"] or not preview.changed else change_settings(
                campaign, confirm=preview.digest, **values)
        except ServiceError as exc:
            raise CommandError(f"nothing was changed: {FLAGS.get(exc.field, exc.field)}: {exc.message}") from None
        if not done.changed:
            self.stdout.write("Nothing changed.")
            return
        for effect in done.effects:
            self.stdout.write(f"- {effect}")
        self.stdout.write("Applied." if done.applied else "Not applied (--dry-run)." if options["dry_run"] else
                          "Not applied: the work moved meanwhile; run it again.")
