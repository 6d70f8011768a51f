from django.apps import AppConfig


class ProjectConfig(AppConfig):
    """The project itself as an app: its system checks and the login throttle's signal receivers."""

    name = "config"
    label = "project"
    verbose_name = "Project configuration"

    def ready(self):
        from config import checks, throttle  # noqa: F401
