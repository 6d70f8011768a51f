"""manage.py issue_token USERNAME [--role participant|organiser] [--campaign C]"""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import ApiToken
from annotation.services.tokens import TokenError, issue_token


class Command(BaseCommand):
    help = (
        "Make a REST API token for a user (created if needed, and put in the role's group) and print its key. "
        "The key is shown only now: only its hash is stored. Send it as `Authorization: Token <key>`."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", help="The user (a participating team, or an organiser).")
        parser.add_argument(
            "--role", choices=ApiToken.Role.values, default=ApiToken.Role.PARTICIPANT,
            help="participant (default): uploads and sees its own runs; organiser: everything.",
        )
        parser.add_argument("--campaign", help="Limit the token to this campaign.")
        parser.add_argument("--quiet", action="store_true", help="Print only the key (for scripts).")

    def handle(self, *args, **options):
        try:
            token, key = issue_token(username=options["username"], role=options["role"], campaign=options["campaign"])
        except TokenError as exc:
            raise CommandError(str(exc)) from exc
        if options["quiet"]:
            self.stdout.write(key)
            return
        scope = f" for campaign {token.campaign.name!r}" if token.campaign else ""
        self.stdout.write(f"{token.role} token {token.prefix} for user {token.user.username!r}{scope}:")
        self.stdout.write(key)
        self.stdout.write("Keep it: it is not shown again. Revoke it with: manage.py revoke_token " + token.prefix)
