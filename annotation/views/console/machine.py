"""Machine assistance (/campaigns/<name>/machine/): train an auto-annotator on the campaign's labels and see its
k-fold figures beside the human–human κ, label chosen pools with it, run the LLM judge (the site's endpoint, the
campaign's prompt, a spend cap), and follow every job (jobs.js polls the one progress endpoint, /jobs/machine/<id>/).

Thin over assessments.services.machine, the service manage.py train_annotator, machine_label and llm_judge call:
a page accepts and refuses what a command does. Machine labels stay their own source (qrels, agreement and the
dashboard's human figures never count them); the dashboard compares them with people.
"""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.views.console.common import campaign_of, organisers_only
from annotation.services.triage import TriageInvalid, audit_review
from annotation.services.nuggets import llm_job
from annotation.views.console.forms import (AuditForm, LlmJudgeForm, LlmNuggetsForm, LlmPromptForm, MachineLabelForm,
                                            TrainAnnotatorForm)
from assessments.models import MachineLabelSource, QrelSet
from assessments.services import machine

PROMPTS = (("llm_prompt", "Relevance prompt", False), ("llm_filter_prompt", "Query filter prompt", True))


def _choices(campaign):
    pools = list(machine.campaign_pools(campaign.pk).order_by("name").values_list("name", flat=True))
    collections = machine.campaign_pools(campaign.pk).values("collection_id")
    track = getattr(campaign, "track", None)
    qrel_sets = QrelSet.objects.filter(collection_id__in=collections)
    if track is not None:
        qrel_sets = qrel_sets | QrelSet.objects.filter(collection=track.collection)
    annotators = [s for s in machine.campaign_sources(campaign.pk)
                  if s.kind == MachineLabelSource.Kind.CLASSIFIER and s.status == MachineLabelSource.Status.READY]
    labelled = [s for s in machine.campaign_sources(campaign.pk)
                if s.kind in (MachineLabelSource.Kind.CLASSIFIER, MachineLabelSource.Kind.LLM) and s.label_count]
    return {"pools": pools, "qrel_sets": sorted(set(qrel_sets.values_list("name", flat=True))),
            "annotators": annotators, "labelled": labelled}


def _forms(campaign, choices, bound=None):
    """The page's four kinds of form, unbound except the one posted (`bound`: (action, form))."""
    settings = campaign.settings if isinstance(campaign.settings, dict) else {}
    forms = {
        "train": TrainAnnotatorForm(qrel_sets=choices["qrel_sets"], pools=choices["pools"]),
        "label": MachineLabelForm(annotators=choices["annotators"], pools=choices["pools"]),
        "judge": LlmJudgeForm(pools=choices["pools"]),
        "nuggets": LlmNuggetsForm(),
        "audit": AuditForm(sources=choices["labelled"]),
    }
    prompts = []
    for key, title, filtering in PROMPTS:
        own = settings.get(key)
        form = LlmPromptForm(auto_id=f"{key}-%s", initial={
            "which": key, "prompt": own if isinstance(own, str) and own else machine.default_prompt(
                filter_queries=filtering)})
        prompts.append({"key": key, "title": title, "own": bool(own), "form": form})
    if bound is not None:
        action, form = bound
        if action == "prompt":
            for entry in prompts:
                if entry["key"] == form.data.get("which"):
                    entry["form"] = form
        else:
            forms[action] = form
    return forms, prompts


def _render(request, campaign, *, bound=None, status=200, choices=None):
    choices = choices or _choices(campaign)
    forms, prompts = _forms(campaign, choices, bound)
    sources = [machine.source_summary(s) for s in machine.campaign_sources(campaign.pk)]
    jobs = [machine.job_status(j) for j in machine.campaign_jobs(campaign.pk)[:20]]
    return render(request, "annotation/console/machine.html", {
        "campaign": campaign, "tab": "machine", "forms": forms, "prompts": prompts, "llm": machine.llm_configured(),
        "annotators": [s for s in sources if s["kind"] == MachineLabelSource.Kind.CLASSIFIER],
        "judges": [s for s in sources if s["kind"] != MachineLabelSource.Kind.CLASSIFIER],
        "jobs": jobs, "human": machine.campaign_human_kappa(campaign.pk), "pools": choices["pools"],
        "nuggets": campaign.task == campaign.Task.NUGGETS,
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
    elif action == "judge":
        form = LlmJudgeForm(request.POST, pools=choices["pools"])
        start = _judge
    elif action == "nuggets" and campaign.task == campaign.Task.NUGGETS:
        form = LlmNuggetsForm(request.POST)
        start = llm_job
    elif action == "audit":
        form = AuditForm(request.POST, sources=choices["labelled"])
        return _audit(request, campaign, form, choices)
    elif action == "prompt":
        which = request.POST.get("which", "")
        if which not in {key for key, _, _ in PROMPTS}:
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


def _train(campaign, data):
    from_campaign = data["learn_from"] == "campaign"
    return machine.train(
        campaign_id=campaign.pk if from_campaign else None, campaign_name=campaign.name,
        qrels=None if from_campaign else data["qrels"], pool=None if from_campaign else data["pool"],
        topics=data["topic_ids"], model=data["model"], folds=data["folds"], epochs=data["epochs"],
        max_length=data["max_length"], batch_size=data["batch_size"], learning_rate=data["learning_rate"],
        threshold=data["threshold"], max_examples=data["max_examples"], name=data["name"], within=campaign.pk,
    )


def _label(campaign, data):
    return machine.label(data["annotator"], data["pools"], include_judged=data["include_judged"], within=campaign.pk)


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
            settings[key] = machine.check_prompt(form.cleaned_data["prompt"],
                                                 filter_queries=key == "llm_filter_prompt")
        except machine.MachineInvalid as exc:
            form.add_error("prompt", exc.message)
            return _render(request, campaign, bound=("prompt", form), status=400, choices=choices)
        note = "The campaign's prompt is saved: the next LLM run uses it (as a new judge: its answers are its own)."
    campaign.settings = settings
    campaign.save(update_fields=["settings"])
    messages.success(request, note)
    return redirect(reverse("annotation:console_machine", args=[campaign.name]) + f"#prompt-{key}")
