"""manage.py llm_judge --pool NAME… [--campaign NAME] [--endpoint URL] [--model M] [--limit N]
[--max-requests N] [--max-tokens N] [--rate RPM] [--filter-queries [--topics ID…]] [--retry-errors]"""

from django.core.management.base import BaseCommand, CommandError

from assessments.campaign_link import campaign_named
from assessments.machine.commands import run_and_report
from assessments.management.commands.train_annotator import flag
from assessments.services import machine


class Command(BaseCommand):
    help = (
        "Ask an OpenAI-compatible chat endpoint (LLM_JUDGE_BASE_URL, LLM_JUDGE_MODEL, LLM_JUDGE_API_KEY, or "
        "--endpoint/--model) to grade the pools' candidates on the TREC 0-3 scale (the UMBRELA-style prompt, or the "
        "campaign's settings llm_prompt), temperature 0, answers stored as they come and read strictly: an "
        "unreadable answer is an error, never a 0. Each answer is stored as it comes: run it again and it asks only "
        "what has no answer. --filter-queries keeps the queries that describe a plot and drops those that only "
        "express a feeling (seed 000 step 2)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--pool", "--pools", dest="pools", nargs="+", default=[], metavar="NAME")
        parser.add_argument("--campaign", help="Use this campaign's prompt (settings llm_prompt / llm_filter_prompt) "
                            "and keep the labels as the campaign's judge.")
        parser.add_argument("--endpoint", metavar="URL", help="Base URL of the chat API, e.g. http://127.0.0.1:8080/v1 "
                            "(default LLM_JUDGE_BASE_URL; nothing is sent without one).")
        parser.add_argument("--model", help="The model to ask (default LLM_JUDGE_MODEL).")
        parser.add_argument("--limit", type=int, help="Ask at most this many items in this run.")
        parser.add_argument("--max-requests", type=int, help="Spend cap: requests over every run of this judge "
                            "(default LLM_JUDGE_MAX_REQUESTS).")
        parser.add_argument("--max-tokens", type=int, help="Spend cap: tokens over every run of this judge "
                            "(default LLM_JUDGE_MAX_TOKENS).")
        parser.add_argument("--rate", type=float, metavar="RPM", help="At most this many requests a minute "
                            "(default LLM_JUDGE_REQUESTS_PER_MINUTE).")
        parser.add_argument("--timeout", type=float, help="Seconds to wait for an answer (default LLM_JUDGE_TIMEOUT).")
        parser.add_argument("--retries", type=int, help="Tries again after a timeout, 429 or 5xx (default "
                            "LLM_JUDGE_RETRIES), waiting 1, 2, 4… s or what Retry-After says.")
        parser.add_argument("--filter-queries", action="store_true",
                            help="Judge the queries themselves: describes a plot (keep) or only a feeling (drop).")
        parser.add_argument("--topics", "--topic", dest="topics", nargs="+", action="extend", default=[], metavar="ID",
                            help="Only these topics (the query filter may take topics without a pool).")
        parser.add_argument("--retry-errors", action="store_true", help="Ask again the items whose answer was unreadable.")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        campaign = None
        if options["campaign"]:
            campaign = campaign_named(options["campaign"])
            if campaign is None:
                raise CommandError(f"nothing was sent: --campaign: no campaign named {options['campaign']!r}")
        try:
            job = machine.judge(
                pools=options["pools"], topics=options["topics"], campaign_id=campaign and campaign.pk,
                campaign_settings=campaign.settings if campaign else None, endpoint=options["endpoint"],
                model=options["model"], filter_queries=options["filter_queries"], limit=options["limit"],
                max_requests=options["max_requests"], max_tokens=options["max_tokens"], per_minute=options["rate"],
                timeout=options["timeout"], retries=options["retries"], retry_errors=options["retry_errors"],
            )
        except machine.MachineInvalid as exc:
            raise CommandError(f"nothing was sent: {flag(exc)}") from exc
        run_and_report(self, job, options, text)

def text(summary) -> str:
    lines = [f"{summary['name']} (#{summary['source']}): {summary['asked_now']:,} asked now "
             f"({summary['errors_now']:,} unreadable or refused), {summary['requests_now']:,} requests, "
             f"{summary['tokens_now']:,} tokens; {summary['status']}",
             f"in all: {summary['labels']:,} answers, {summary['unreadable']:,} unreadable, "
             f"{summary['requests']:,} requests, {summary['tokens']:,} tokens"]
    if "grades" in summary:
        lines.append("grades: " + ", ".join(f"{g}: {n:,}" for g, n in summary["grades"].items()))
    elif "topics" in summary:
        lines.append(f"topics with suggestions: {summary['topics']:,}")
    else:
        lines.append(f"keep {len(summary['keep'])}: {' '.join(summary['keep'])}")
        lines.append(f"drop {len(summary['drop'])}: {' '.join(summary['drop'])}")
    for example in summary["unreadable_examples"]:
        lines.append(f"unreadable: {example['topic']} {example['passage'] or ''} {example['error']}")
    return "\n".join(lines)
