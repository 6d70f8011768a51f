"""Keep the role groups in place after every migrate."""

from django.db.models.signals import post_migrate
from django.dispatch import receiver


@receiver(post_migrate)
def create_role_groups(sender, **kwargs):
    if sender.name == "annotation":
        from annotation.roles import ensure_groups

        ensure_groups()
