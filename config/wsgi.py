"""WSGI entry point. Serving through WSGI is production mode unless DJANGO_DEBUG says otherwise."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_DEBUG", "0")

application = get_wsgi_application()
