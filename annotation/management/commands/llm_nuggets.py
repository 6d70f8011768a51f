"""manage.py llm_nuggets assign|suggest --campaign C [--topics ID…] [--endpoint URL] [--model M] [--limit N]
[--max-requests N] [--max-tokens N] [--rate RPM] [--timeout S] [--retries N] [--retry-errors]"""

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._nuggets import served
from annotation.models import Campaign
from annotation.services.nuggets import campaign_scope, llm_job
from assessments.machine.commands import run_and_report
from assessments.management.commands.llm_judge import text
from assessments.management.commands.train_annotator import flag
from assessments.services import machine


class Command(BaseCommand):
    help = (
        "Ask an OpenAI-compatible chat endpoint (LLM_JUDGE_BASE_URL, LLM_JUDGE_MODEL, LLM_JUDGE_API_KEY, or "
        "--endpoint/--model) about a nuggets campaign, as the AutoNuggetizer does: `assign` labels each answer's "
        "support of each nugget of its topic's bank (support, partial_support, not_support), `suggest` lists each "
        "topic's atomic nuggets (vital or okay) from its answers and their cited passages, for the creation page "
        "where the campaign shows suggestions. Machine labels are a source of their own: the people's scores never "
        "count them (export_nugget_scores --source names one). Answers are read strictly and stored as they come; "
        "run it again and it asks only what has no answer. The campaign's prompts (settings llm_nugget_assign_prompt, "
        "llm_nugget_suggest_prompt, edited on the console's Machine page) replace the nuggetizer's."
    )

    def add_arguments(self, parser):
        parser.add_argument("step", choices=("assign", "suggest"))
        parser.add_argument("--campaign", required=True, help="The nuggets campaign.")
        parser.add_argument("--topics", "--topic", dest="topics", nargs="+", action="extend", default=[],
                            metavar="ID", help="Only these topics.")
        parser.add_argument("--endpoint", metavar="URL", help="Base URL of the chat API, e.g. http://127.0.0.1:8080/v1 "
                            "(default LLM_JUDGE_BASE_URL; nothing is sent without one).")
        parser.add_argument("--model", help="The model to ask (default LLM_JUDGE_MODEL).")
        parser.add_argument("--limit", type=int, help="Ask at most this many (answer, nugget) labels, or topics.")
        parser.add_argument("--max-requests", type=int, help="Spend cap: requests over every run of this source.")
        parser.add_argument("--max-tokens", type=int, help="Spend cap: tokens over every run of this source.")
        parser.add_argument("--rate", type=float, metavar="RPM", help="At most this many requests a minute.")
        parser.add_argument("--timeout", type=float, help="Seconds to wait for an answer (default LLM_JUDGE_TIMEOUT).")
        parser.add_argument("--retries", type=int, help="Tries again after a timeout, 429 or 5xx.")
        parser.add_argument("--retry-errors", action="store_true", help="Ask again what had an unreadable answer.")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        scope = served(campaign_scope, options["campaign"])
        step = {"step": options["step"], "topics": options["topics"], "limit": options["limit"],
                "max_requests": options["max_requests"], "max_tokens": options["max_tokens"],
                "retry_errors": options["retry_errors"]}
        try:  # the campaign's prompt, as the console and the API use it
            job = llm_job(Campaign.objects.get(pk=scope.campaign_id), step, endpoint=options["endpoint"],
                          model=options["model"], per_minute=options["rate"], timeout=options["timeout"],
                          retries=options["retries"])
        except machine.MachineInvalid as exc:
            said = f"settings {exc.field}: {exc.message}" if exc.field in machine.PROMPTS else flag(exc)
            raise CommandError(f"nothing was sent: {said}") from exc
        run_and_report(self, job, options, text, stopped="the LLM stopped")
