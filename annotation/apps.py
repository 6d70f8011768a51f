from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    """The people: roles, campaigns, assessor pages."""

    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        from annotation import signals  # noqa: F401
