"""manage.py revoke_token KEY_OR_PREFIX | --user USERNAME"""

from django.core.management.base import BaseCommand, CommandError

from annotation.services.tokens import TokenError, revoke_tokens


class Command(BaseCommand):
    help = "Revoke a REST API token (named by its key or its prefix), or every token of a user. It is final."

    def add_arguments(self, parser):
        parser.add_argument("token", nargs="?", help="The key, or its prefix (the 8 characters issue_token printed).")
        parser.add_argument("--user", help="Revoke every active token of this user.")

    def handle(self, *args, **options):
        try:
            revoked = revoke_tokens(key_or_prefix=options["token"], username=options["user"])
        except TokenError as exc:
            raise CommandError(str(exc)) from exc
        for token in revoked:
            self.stdout.write(f"revoked {token.role} token {token.prefix} of {token.user.username!r}")
        if not revoked:
            self.stdout.write(f"user {options['user']!r} has no active tokens")
