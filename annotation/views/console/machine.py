"""Machine assistance (/campaigns/<name>/machine/): train an auto-annotator on the campaign's labels and see its
k-fold figures beside the human–human κ, label chosen pools with it or with a zero-shot source (fusion of the pools'
runs, encoder similarity: no human label needed), run the LLM judge (the site's endpoint, the
campaign's prompt, a spend cap), and follow every job (jobs.js polls the one progress endpoint, /jobs/machine/<id>/).

Thin over assessments.services.machine, the service manage.py train_annotator, machine_label and llm_judge call:
a page accepts and refuses what a command does. Machine labels stay their own source (qrels, agreement and the
dashboard's human figures never count them); the dashboard compares them with people.
"""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.views.console.common import campaign_of, more_problems, organisers_only, problems_of
from annotation.services.triage import TriageInvalid, audit_review, triage_sources
from annotation.services.nuggets import llm_job
from annotation.units import tasks
from annotation.views.console.forms import (AuditForm, ImportMachineLabelsForm, LlmJudgeForm, LlmNuggetsForm,
                                            LlmPromptForm, MachineLabelForm, TrainAnnotatorForm, ZeroShotForm)
from assessments.machine.annotator import ZERO_SHOT_SHARE
from assessments.models import MachineLabelSource, Pool, QrelSet
from assessments.services import machine

NUGGETS_IDS = "nuggets-%s"  # its inputs' ids: the training form has a `topics` (and the judge's a `limit`) too
PROMPTS = (("llm_prompt", "Relevance prompt", False), ("llm_filter_prompt", "Query filter prompt", False),
           ("llm_nugget_assign_prompt", "Nugget assignment prompt", True),
           ("llm_nugget_suggest_prompt", "Nugget suggestion prompt", True))  # (key, title, nuggets campaigns only)
PROMPT_HELP = {
    "llm_nugget_assign_prompt": "{query}, {answer} and {nuggets} are replaced by the topic, the answer and a JSON "
                                "list of nugget texts ({count}, if used, by how many); the answer must be a JSON "
                                "list of support, partial_support or not_support, one a nugget, in their order.",
    "llm_nugget_suggest_prompt": "{query} and {context} are replaced by the topic and its numbered answers and cited "
                                 "passages ({most}, if used, by the most nuggets taken); the answer must be a JSON "
                                 "list of {\"text\", \"importance\": vital or okay}.",
}


def _prompts(campaign):
    """The prompts the campaign's page edits: the nugget steps' on a nuggets campaign only."""
    nuggets = tasks.of(campaign).answers
    return [(key, title) for key, title, for_nuggets in PROMPTS if nuggets or not for_nuggets]


def _choices(campaign):
    pools = list(machine.campaign_pools(campaign.pk).order_by("name").values_list("name", flat=True))
    collections = machine.campaign_pools(campaign.pk).values("collection_id")
    track = getattr(campaign, "track", None)
    qrel_sets = QrelSet.objects.filter(collection_id__in=collections)
    if track is not None:
        qrel_sets = qrel_sets | QrelSet.objects.filter(collection=track.collection)
    annotators = [s for s in machine.campaign_sources(campaign.pk)
                  if s.kind == MachineLabelSource.Kind.CLASSIFIER and s.status == MachineLabelSource.Status.READY]
    labelled = [s for s in triage_sources(machine.campaign_sources(campaign.pk)) if s.label_count]  # the audit's
    return {"pools": pools, "qrel_sets": sorted(set(qrel_sets.values_list("name", flat=True))),
            "annotators": annotators, "labelled": labelled}


def _forms(campaign, choices, bound=None):
    """The page's forms, unbound except the one posted (`bound`: (action, form))."""
    settings = campaign.settings if isinstance(campaign.settings, dict) else {}
    forms = {
        "train": TrainAnnotatorForm(qrel_sets=choices["qrel_sets"], pools=choices["pools"]),
        "label": MachineLabelForm(annotators=choices["annotators"], pools=choices["pools"]),
        "zero_shot": ZeroShotForm(pools=choices["pools"]),
        "judge": LlmJudgeForm(pools=choices["pools"]),
        "nuggets": LlmNuggetsForm(auto_id=NUGGETS_IDS),
        "audit": AuditForm(sources=choices["labelled"]),
        "import": ImportMachineLabelsForm(),
    }
    prompts = []
    for key, title in _prompts(campaign):
        own = settings.get(key)
        form = LlmPromptForm(auto_id=f"{key}-%s", initial={
            "which": key, "prompt": own if isinstance(own, str) and own else machine.default_prompt(key=key)})
        prompts.append({"key": key, "title": title, "own": bool(own), "form": form})
    if bound is not None:
        action, form = bound
        if action == "prompt":
            for entry in prompts:
                if entry["key"] == form.data.get("which"):
                    entry["form"] = form
        else:
            forms[action] = form
    for entry in prompts:
        if entry["key"] in PROMPT_HELP:
            entry["form"].fields["prompt"].help_text = PROMPT_HELP[entry["key"]]
    return forms, prompts


def _render(request, campaign, *, bound=None, status=200, choices=None, problems=(), more=0):
    choices = choices or _choices(campaign)
    forms, prompts = _forms(campaign, choices, bound)
    sources = [machine.source_summary(s) for s in machine.campaign_sources(campaign.pk)]
    zero_shot = [s for s in sources if s["kind"] == MachineLabelSource.Kind.ZERO_SHOT]
    names = dict(Pool.objects.filter(pk__in={p for s in zero_shot for p in s["settings"].get("pools", [])})
                 .values_list("pk", "name"))
    for s in zero_shot:  # the pools it labels, by name
        s["pool_names"] = [names[p] for p in s["settings"].get("pools", []) if p in names]
    jobs = [machine.job_status(j) for j in machine.campaign_jobs(campaign.pk)[:20]]
    return render(request, "annotation/console/machine.html", {
        "campaign": campaign, "tab": "machine", "forms": forms, "prompts": prompts, "llm": machine.llm_configured(),
        "annotators": [s for s in sources if s["kind"] == MachineLabelSource.Kind.CLASSIFIER],
        "zero_shot": zero_shot, "zero_shot_share": f"{ZERO_SHOT_SHARE:.0%}",
        "judges": [s for s in sources if s["kind"] not in (MachineLabelSource.Kind.CLASSIFIER,
                                                              MachineLabelSource.Kind.ZERO_SHOT)],
        "jobs": jobs, "human": machine.campaign_human_kappa(campaign.pk), "pools": choices["pools"],
        "nuggets": tasks.of(campaign).answers, "problems": list(problems), "more_problems": more,
    }, status=status)


@require_http_methods(["GET", "POST"])
@organisers_only
def machine_page(request, name):
    """The campaign's annotators and LLM judges with their figures, their jobs, and the forms that start more."""
    campaign = campaign_of(name)
    if request.method == "GET":
        return _render(request, campaign)
    action = request.POST.get("action")
    choices = _choices(campaign)
    if action == "train":
        form = TrainAnnotatorForm(request.POST, qrel_sets=choices["qrel_sets"], pools=choices["pools"])
        start = _train
    elif action == "label":
        form = MachineLabelForm(request.POST, annotators=choices["annotators"], pools=choices["pools"])
        start = _label
    elif action == "zero_shot":
        form = ZeroShotForm(request.POST, pools=choices["pools"])
        start = _zero_shot
    elif action == "judge":
        form = LlmJudgeForm(request.POST, pools=choices["pools"])
        start = _judge
    elif action == "nuggets" and tasks.of(campaign).answers:
        form = LlmNuggetsForm(request.POST, auto_id=NUGGETS_IDS)
        start = llm_job
    elif action == "audit":
        form = AuditForm(request.POST, sources=choices["labelled"])
        return _audit(request, campaign, form, choices)
    elif action == "import":
        return _import(request, campaign, ImportMachineLabelsForm(request.POST, request.FILES), choices)
    elif action == "prompt":
        which = request.POST.get("which", "")
        if which not in {key for key, _ in _prompts(campaign)}:
            return _render(request, campaign, status=400)
        form = LlmPromptForm(request.POST, auto_id=f"{which}-%s")
        return _prompt(request, campaign, form, choices)
    else:
        messages.error(request, "Choose what to start.")
        return _render(request, campaign, status=400, choices=choices)
    if not form.is_valid():
        return _render(request, campaign, bound=(action, form), status=400, choices=choices)
    try:
        job = start(campaign, form.cleaned_data)
    except machine.MachineInvalid as exc:
        form.add_service_error(exc.field, exc.message)
        return _render(request, campaign, bound=(action, form), status=400, choices=choices)
    machine.send(job, user=request.user)
    messages.success(request, f"{job.get_kind_display()} #{job.pk} ({job.source.name}) started: its progress is below.")
    return redirect(reverse("annotation:console_machine", args=[campaign.name]) + f"#job-{job.pk}")


def _import(request, campaign, form, choices):
    """An outside judge's labels as the campaign's machine label source (as import_machine_labels and the API):
    checked whole, every problem listed with its line; nothing stored then."""
    from django.conf import settings

    from assessments.importers.machine_labels import import_machine_labels
    from retrieval.ingest import ImportFailed

    if not form.is_valid():
        return _render(request, campaign, bound=("import", form), status=400, choices=choices)
    data, file = form.cleaned_data, form.cleaned_data["file"]
    if file.size > settings.API_MAX_UPLOAD_BYTES:
        form.add_error("file", f"the file has {file.size:,} bytes; at most {settings.API_MAX_UPLOAD_BYTES:,} are taken")
        return _render(request, campaign, bound=("import", form), status=400, choices=choices)
    try:
        result = import_machine_labels(
            (file.name or "upload")[:200], data["name"], campaign_name=campaign.name, fmt=data["format"],
            model=data["model"], prompt=data["prompt"], user=request.user, replace=data["replace"], stream=file,
            size=file.size)
    except ImportFailed as exc:
        return _render(request, campaign, bound=("import", form), status=400, choices=choices,
                       problems=problems_of(exc), more=more_problems(exc))
    messages.success(request, f"{result.summary()} A source of their own: never mixed into people's labels.")
    return redirect(reverse("annotation:console_machine", args=[campaign.name]) + f"#source-{result.source.pk}")


def _train(campaign, data):
    from_campaign = data["learn_from"] == "campaign"
    return machine.train(
        campaign_id=campaign.pk if from_campaign else None, campaign_name=campaign.name,
        qrels=None if from_campaign else data["qrels"], pool=None if from_campaign else data["pool"],
        topics=data["topic_ids"], model=data["model"], folds=data["folds"], epochs=data["epochs"],
        max_length=data["max_length"], batch_size=data["batch_size"], learning_rate=data["learning_rate"],
        threshold=data["threshold"], max_examples=data["max_examples"], name=data["name"], within=campaign.pk,
        run_blind=data["run_blind"],
    )


def _label(campaign, data):
    return machine.label(data["annotator"], data["pools"], include_judged=data["include_judged"], within=campaign.pk)


def _zero_shot(campaign, data):
    return machine.zero_shot(data["method"], data["pools"], name=data["name"], include_judged=data["include_judged"],
                             within=campaign.pk)


def _judge(campaign, data):
    return machine.judge(
        pools=data["pools"], campaign_settings=campaign.settings, filter_queries=data["filter_queries"],
        limit=data["limit"], max_requests=data["max_requests"], max_tokens=data["max_tokens"],
        retry_errors=data["retry_errors"], within=campaign.pk,
    )


def _audit(request, campaign, form, choices):
    """A sample of the human labels the machine disagrees with goes to review (the reviewers' queue)."""
    if not form.is_valid():
        return _render(request, campaign, bound=("audit", form), status=400, choices=choices)
    data = form.cleaned_data
    try:
        done = audit_review(campaign, data["machine_source"], size=data["size"], seed=data["seed"])
    except TriageInvalid as exc:
        form.add_service_error(exc.field, exc.message)
        return _render(request, campaign, bound=("audit", form), status=400, choices=choices)
    reviews = len(done["reviews"])
    messages.success(request, f"{done['disagreeing']:,} human labels disagree with the machine, {done['eligible']:,} "
                              f"in batches that are done: {done['sampled']:,} sampled into {reviews} review"
                              f"{'s' if reviews != 1 else ''} for the reviewers.")
    return redirect(reverse("annotation:console_machine", args=[campaign.name]) + "#audit-form")


def _prompt(request, campaign, form, choices):
    """Save the campaign's own prompt, or go back to the default (the `reset` button)."""
    if not form.is_valid():
        return _render(request, campaign, bound=("prompt", form), status=400, choices=choices)
    key = form.cleaned_data["which"]
    settings = dict(campaign.settings) if isinstance(campaign.settings, dict) else {}
    if request.POST.get("reset"):
        settings.pop(key, None)
        note = "The default prompt is used again."
    else:
        try:
            settings[key] = machine.check_prompt(form.cleaned_data["prompt"], key=key)
        except machine.MachineInvalid as exc:
            form.add_error("prompt", exc.message)
            return _render(request, campaign, bound=("prompt", form), status=400, choices=choices)
        note = "The campaign's prompt is saved: the next LLM run uses it (as a new source: its answers are its own)."
    campaign.settings = settings
    campaign.save(update_fields=["settings"])
    messages.success(request, note)
    return redirect(reverse("annotation:console_machine", args=[campaign.name]) + f"#prompt-{key}")
