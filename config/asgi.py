"""ASGI entry point. Serving through ASGI is production mode unless DJANGO_DEBUG says otherwise."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "0")

application = get_asgi_application()
