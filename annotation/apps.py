from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    """The people: roles, campaigns, assessor pages."""

    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        from annotation import signals  # noqa: F401
        from annotation.services.data_imports import resend_queued
        from retrieval.services.jobs import node_died

        node_died.connect(resend_queued, dispatch_uid="annotation.data_imports.resend_queued", weak=False)
