from django.apps import AppConfig


class AssessmentsConfig(AppConfig):
    """The test collection: topics, runs, pools, judgements, qrels."""

    name = "assessments"
    verbose_name = "Test collection"

    def ready(self):
        from django.db.models.signals import post_delete, post_save

        from assessments.models import Facet
        from assessments.services.judging import forget_topic_facets
        from assessments.services.machine import resend_unfinished
        from retrieval.services.jobs import node_died

        def forget(sender, instance, **kwargs):
            forget_topic_facets(instance.topic_id)

        post_save.connect(forget, sender=Facet, dispatch_uid="assessments.forget_topic_facets.save", weak=False)
        post_delete.connect(forget, sender=Facet, dispatch_uid="assessments.forget_topic_facets.delete", weak=False)
        node_died.connect(resend_unfinished, dispatch_uid="assessments.machine.resend_unfinished", weak=False)
