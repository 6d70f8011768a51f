"""The sign-in backend: Django's ModelBackend, reading the signed-in user of each request with SQL compiled once.

Every request of a signed-in user reads the user again (django.contrib.auth.get_user → the backend's get_user); the
ORM compiles that query anew each time, which on a save cost more CPU than the database's answer. The query and
the rules (an inactive user is signed out) are the ModelBackend's own.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from config.prepared import Prepared

_USER = Prepared(lambda pk: get_user_model()._default_manager.filter(pk=pk), pk=2_147_275_009)


class Backend(ModelBackend):
    """settings.AUTHENTICATION_BACKENDS: sign in with a username and password, as ModelBackend does."""

    def get_user(self, user_id):
        if not isinstance(user_id, int):
            return super().get_user(user_id)
        user = _USER.first(pk=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
