"""What the machine-assistance commands share: finding a campaign by name, and a progress bar on stderr."""

from django.core.management.base import CommandError

from assessments.campaign_link import campaign_id_named


def campaign_id(name, what="nothing was done"):
    """The id of the campaign named `name` (None for no name); CommandError when there is none."""
    if not name:
        return None
    found = campaign_id_named(name)
    if found is None:
        raise CommandError(f"{what}: --campaign: no campaign named {name!r}")
    return found


def progress_bar(command, total, description, enabled=True):
    """A tqdm bar on the command's stderr with the time left, or None when hidden."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=description, unit="item", file=command.stderr._out, dynamic_ncols=True)


def number(value, digits=3):
    return "–" if value is None else f"{value:.{digits}f}"


def run_and_report(command, job, options, text, stopped="the judge stopped"):
    """What an LLM command does with its job: run it with a progress bar (unless --no-progress), write the summary
    (JSON, or `text(summary)`), and fail with the job's error (a stopped job's message on stderr)."""
    import json

    from assessments.models import MachineJob
    from assessments.services import machine

    bar = progress_bar(command, job.items_total, "asking", not options["no_progress"])
    try:
        job = machine.run(job, bar)
    finally:
        if bar is not None:
            bar.close()
    summary = machine.judge_summary(job)
    command.stdout.write(json.dumps(summary, indent=1, default=str) if options["format"] == "json" else text(summary))
    if job.status == MachineJob.Status.FAILED:
        raise CommandError(f"{stopped}: {job.error}")
    if job.status == MachineJob.Status.STOPPED:
        command.stderr.write(job.message)
    return job
