"""The sign-in backend: Django's ModelBackend, reading the signed-in user of each request with SQL compiled once.

Every request of a signed-in user reads the user again (django.contrib.auth.get_user → the backend's get_user); the
ORM compiles that query anew each time, which on a save cost more CPU than the database's answer. The query and
the rules (an inactive user is signed out) are the ModelBackend's own.

A view that reads the user anyway (a save reads its assignment with the assessor joined) can hand that row over
(`resolve_user`): the backend then takes it instead of a second read, when it is the session's user. Django's own
checks run on it as on a user read here: the session's hash of the password, the backend, an inactive user.
"""

import contextvars

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError

from config.prepared import Prepared

_USER = Prepared(lambda pk: get_user_model()._default_manager.filter(pk=pk), pk=2_147_275_009)
_KNOWN = contextvars.ContextVar("pooljudge_known_user", default=None)


class Backend(ModelBackend):
    """settings.AUTHENTICATION_BACKENDS: sign in with a username and password, as ModelBackend does."""

    def get_user(self, user_id):
        if not isinstance(user_id, int):
            return super().get_user(user_id)
        known = _KNOWN.get()
        user = known if known is not None and known.pk == user_id else _USER.first(pk=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None


def resolve_user(request, known):
    """Resolve `request.user` now, with `known` (a row of the user table read a moment ago in this request, or None)
    standing for the session's user when the ids match, so that it is not read again. Returns request.user."""
    token = _KNOWN.set(known)
    try:
        request.user.is_authenticated  # noqa: B018 (the lazy user is read on first use: here, within the block)
    finally:
        _KNOWN.reset(token)
    return request.user


def session_user_id(request):
    """The id of the user the request's session names (not yet checked: `request.user` checks it), or None."""
    try:
        return get_user_model()._meta.pk.to_python(request.session[SESSION_KEY])
    except (KeyError, ValidationError):
        return None
