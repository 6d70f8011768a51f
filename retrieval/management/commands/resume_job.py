"""manage.py resume_job [ID…] [--failed] [--stale] [--list]"""

from argparse import ArgumentTypeError

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from config.ids import ID_MAX, parse_id

from retrieval.models import Job, Shard
from retrieval.services import jobs


class Command(BaseCommand):
    help = (
        "Resume retrieval jobs: failed shards (and, for a job named by id, its running shards, whose worker is "
        "presumed dead) are done again; what is done stays done. --failed takes every failed job, --stale every "
        "job with a shard whose worker has sent no heartbeat for 10 minutes. --list only shows progress."
    )

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", type=job_id, metavar="ID", help="Job ids (see --list or the admin).")
        parser.add_argument("--failed", action="store_true", help="Resume every failed job.")
        parser.add_argument("--stale", action="store_true", help="Resume jobs whose running shards went silent.")
        parser.add_argument("--list", action="store_true", dest="show", help="Show unfinished jobs and their progress.")

    def handle(self, *args, ids, failed, stale, show, **options):
        if show:
            for job in Job.objects.unfinished().order_by("pk"):
                self.stdout.write(job.progress_line())
            return
        chosen = {job.pk: job for job in Job.objects.filter(pk__in=ids)}
        missing = sorted(set(ids) - set(chosen))
        if missing:
            raise CommandError(f"no job with id {', '.join(map(str, missing))}")
        if failed:
            chosen.update({job.pk: job for job in Job.objects.filter(status=Job.Status.FAILED)})
        if not chosen and not stale:
            raise CommandError("name job ids, or use --failed, --stale or --list")
        for job in chosen.values():
            self.stdout.write(jobs.resume(job.pk, stale_only=False).progress_line())
        if stale:
            silent = Shard.objects.filter(status=Shard.Status.RUNNING, heartbeat_at__lt=timezone.now() - jobs.LEASE)
            for job in Job.objects.unfinished().filter(shards__in=silent).exclude(pk__in=list(chosen)).distinct():
                self.stdout.write(jobs.resume(job.pk, stale_only=True).progress_line())


def job_id(text):
    """A job id as config.ids reads ids: int() took 99999999999999999999999, which the database could not compare
    (OverflowError, a traceback)."""
    value = parse_id(text)
    if value is None:
        raise ArgumentTypeError(f"{text!r} is not a job id (a whole number from 1 to {ID_MAX:,})")
    return value
