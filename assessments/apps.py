from django.apps import AppConfig


class AssessmentsConfig(AppConfig):
    """The test collection: topics, runs, pools, judgements, qrels."""

    name = "assessments"
    verbose_name = "Test collection"
