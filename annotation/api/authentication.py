"""`Authorization: Token <key>` authentication against ApiToken (only key hashes are stored)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from annotation.services.tokens import token_for_key

KEYWORD = "Token"


class TokenAuthentication(authentication.BaseAuthentication):
    """A token issued by `manage.py issue_token`; request.auth is the ApiToken (its role and campaign scope)."""

    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD.lower().encode():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Give the header as `Authorization: Token <key>`.")
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        token = token_for_key(key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        return token.user, token

    def authenticate_header(self, request):
        return f'{KEYWORD} realm="api"'


class TokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema describes TokenAuthentication."""

    target_class = TokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>`, the key printed by `manage.py issue_token`.",
        }
