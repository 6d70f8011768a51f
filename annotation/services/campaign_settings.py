"""Changing a campaign's settings after it was made, saying first what each change does to the work already done.

change_settings is the one way: the console's form on a campaign's home and the admin call it. It applies every
change in one transaction and lists its effects in words ("overlap 1 → 2 adds 2 units for 2 assessors (carol 1,
dave 1)"); without the `confirm` digest of exactly those effects it rolls everything back, so a preview is the
change itself, undone, and what the organiser confirms is what happens (if the work moved in between, the digest
differs and nothing is applied: the caller shows the new effects).

The rules:
- a grade scale (a plot campaign's `plot_scale`, an ad hoc campaign's `grade_scale`) may gain grades and rename
  them, but not lose one that labels of the campaign use (refused naming the field and the count of labels);
- overlap up gives the missing assessors through annotation.services.assignment.assign_campaign (the same rule
  and seed as the work page: the topic's keepers first, then the least loaded of the named assessors);
- the qualification's worked examples (annotation.services.qualification.check_examples) are items of the
  campaign's topics but not of its qualification topics, with a grade of its scale and an explanation;
- overlap down takes back only unstarted work, through annotation.services.workload.take_back (a topic's units
  go by (assessor, topic), and only while all of them are to do and nothing of the topic is judged): the
  assessors given the topic last go first; started work stays, counted. Topics with their own overlap
  (CampaignTopic.overlap) and qualification units keep theirs.
"""

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Count, Max, Q

from annotation.models import Assignment, Campaign, CampaignTopic
from annotation.services import triage
from annotation.services.errors import ServiceError
from annotation.units import tasks

MODEL_FIELDS = ("title", "guidelines", "overlap", "show_run_names", "review_sample_size", "review_threshold",
                "qualification_threshold", "qualification_attempts")
PLOT_KEYS = ("plot_scale", "context_sentences")
ADHOC_KEYS = ("grade_scale", "adhoc_view", "evidence")
PRELABEL_KEYS = ("show_machine_labels", "machine_source", "blind_share")
EXAMPLES = "worked_examples"  # annotation.services.qualification.EXAMPLES_KEY
NUGGET_KEYS = ("nugget_suggestions",)  # annotation.services.nugget_creation.SUGGESTIONS_SETTING
TOPIC_KEYS = ("topic_guidelines",)  # annotation.services.adhoc.TOPIC_GUIDELINES: {topic id: its instructions}
ORDER_KEYS = ("judging_order", "target_recall", "judging_budget", "judging_min_rel", "hybrid_budget")  # judging_order.py
FIELDS = MODEL_FIELDS + PLOT_KEYS + ADHOC_KEYS + PRELABEL_KEYS + (EXAMPLES,) + NUGGET_KEYS + TOPIC_KEYS + ORDER_KEYS


class SettingsChangeInvalid(ServiceError):
    """A settings change that cannot be made; `field` names the setting."""


@dataclass
class SettingsChange:
    """What a change of settings does (or did, when `applied`): one sentence per effect."""

    changed: list = field(default_factory=list)  # the settings that change
    effects: list = field(default_factory=list)
    applied: bool = False

    @property
    def digest(self) -> str:
        """What the organiser confirms: the changes and their effects, as they were shown."""
        return hashlib.sha256(json.dumps([self.changed, self.effects]).encode()).hexdigest()[:32]


class _Preview(Exception):
    def __init__(self, result):
        self.result = result


def change_settings(campaign, *, confirm=None, assessors=None, seed=0, **values) -> SettingsChange:
    """Change the campaign's settings named in `values` (None or the current value: unchanged) and return what that
    does. Applied only when `confirm` is the digest of the same effects (a preview's); otherwise nothing is
    written. `assessors` (usernames) are those overlap up may add (default: the campaign's assessors); `seed` breaks
    ties as on the work page. SettingsChangeInvalid (or an AssignmentError, a WorkInvalid) names the field."""
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise SettingsChangeInvalid(unknown[0], "not a setting that can be changed here")
    try:
        with transaction.atomic():
            locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
            result = SettingsChange()
            _apply(locked, {k: v for k, v in values.items() if v is not None}, result, assessors, seed)
            result.applied = bool(result.changed) and confirm == result.digest
            if not result.applied:
                raise _Preview(result)
    except _Preview as preview:
        return preview.result
    campaign.refresh_from_db()
    return result


def _apply(campaign, values, result, assessors, seed):
    settings = dict(campaign.settings) if isinstance(campaign.settings, dict) else {}
    new_overlap = values.pop("overlap", campaign.overlap)
    for name in MODEL_FIELDS:
        if name in values and values[name] != getattr(campaign, name):
            _check_model_value(name, values[name])
            result.changed.append(name)
            result.effects.append(_model_effect(campaign, name, values[name]))
            setattr(campaign, name, values[name])
    new_settings = dict(settings)
    own = tasks.of(campaign).settings
    for keys, apply, whose in ((PLOT_KEYS, _plot, "plot campaigns only"), (ADHOC_KEYS, _adhoc, "ad hoc campaigns only")):
        if set(keys) <= set(own):
            apply(campaign, settings, new_settings, values, result)
        elif any(k in values for k in keys):
            raise SettingsChangeInvalid(next(k for k in keys if k in values), whose)
    _prelabels(campaign, settings, new_settings, values, result)
    _judging_order(campaign, settings, new_settings, values, result)
    _nugget_suggestions(campaign, settings, new_settings, values, result)
    _topic_guidelines(campaign, settings, new_settings, values, result)
    campaign.settings = new_settings
    _examples(campaign, settings, values, result)
    campaign.save()
    if "qualification_attempts" in result.changed:
        from annotation.services.qualification import grant_retakes

        granted = grant_retakes(campaign)
        if granted:
            result.effects.append(f"{granted} assessor{'s' if granted != 1 else ''} who failed the qualification "
                                  "get a retake: their qualification units open again")
    if new_overlap != campaign.overlap:
        _overlap(campaign, new_overlap, result, assessors, seed)


# Model fields -------------------------------------------------------------------------------------------------


def _check_model_value(name, value):
    if name in ("review_threshold", "qualification_threshold"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise SettingsChangeInvalid(name, "a share from 0 to 1 (0% to 100%)")
    elif name in ("review_sample_size", "qualification_attempts"):
        low = 1 if name == "qualification_attempts" else 0
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 1000:
            raise SettingsChangeInvalid(name, f"a whole number from {low} to 1000")
    elif name == "show_run_names":
        if not isinstance(value, bool):
            raise SettingsChangeInvalid(name, "true or false")
    elif name == "title":
        if not isinstance(value, str) or len(value) > Campaign._meta.get_field("title").max_length:
            raise SettingsChangeInvalid(name, "at most 300 characters")
    elif not isinstance(value, str):
        raise SettingsChangeInvalid(name, "text")


def _open_units(campaign):
    return Assignment.objects.filter(campaign=campaign).exclude(status=Assignment.Status.DONE)


def _units_of(count) -> str:
    return f"{count:,} unit{'s' if count != 1 else ''}"


def _model_effect(campaign, name, value) -> str:
    if name == "title":
        return f"title → {value!r}: assessors see it on their queue and pages"
    if name == "guidelines":
        return (f"guidelines changed: assessors see the new text on their next page "
                f"({_units_of(_open_units(campaign).count())} not done yet)")
    if name == "show_run_names":
        units = _open_units(campaign).filter(run__isnull=False).count()
        return (f"run names shown: the {_units_of(units)} of run articles not done yet show which run wrote them"
                if value else f"run names hidden: judging is blind again ({_units_of(units)} of run articles not done)")
    if name in ("review_sample_size", "review_threshold"):
        from annotation.models import Review

        waiting = Review.objects.filter(assignment__campaign=campaign, status=Review.Status.OPEN).count()
        now = f"{value:.0%}" if name == "review_threshold" else f"{value} item{'s' if value != 1 else ''}"
        was = getattr(campaign, name)
        was = f"{was:.0%}" if name == "review_threshold" else f"{was}"
        what = "review pass mark" if name == "review_threshold" else "review sample"
        return (f"{what} {was} → {now}: applies to batches finished from now on; {waiting} open "
                f"review{'s' if waiting != 1 else ''} keep{'s' if waiting == 1 else ''} theirs")
    if name == "qualification_threshold":
        from annotation.models import QualificationResult

        scored = QualificationResult.objects.filter(campaign=campaign).count()
        return (f"qualification pass mark {campaign.qualification_threshold:.0%} → {value:.0%}: applies to attempts "
                f"scored from now on; {scored} scored attempt{'s' if scored != 1 else ''} keep their result")
    if name == "qualification_attempts":
        return f"qualification attempts {campaign.qualification_attempts} → {value}"
    raise AssertionError(name)


# Scales -------------------------------------------------------------------------------------------------------


def _scale_change(campaign, field_name, layer, old, new, result) -> bool:
    """Effects of replacing scale `old` by `new` ([value, label, ...] lists); refuses losing a grade in use. Whether
    the scale changes."""
    from assessments.models import Judgement

    old_names = {e[0]: e[1] for e in old}
    new_names = {e[0]: e[1] for e in new}
    in_use = dict(
        Judgement.objects.in_campaign(campaign).filter(layer=layer, value__isnull=False, grade__isnull=False)
        .values_list("grade").annotate(n=Count("id")).order_by()
    )
    lost = sorted(set(old_names) - set(new_names), reverse=True)
    used = [(g, in_use[g]) for g in lost if in_use.get(g)]
    if used:
        said = "; ".join(f"grade {g} ({old_names[g]!r}) is used by {n:,} label{'s' if n != 1 else ''}" for g, n in used)
        raise SettingsChangeInvalid(field_name, f"{said}: a scale can gain a grade, not lose one in use")
    effects = []
    for g in sorted(set(new_names) - set(old_names), reverse=True):
        effects.append(f"grade {g} ({new_names[g]!r}) added: assessors can give it from their next page")
    for g in lost:
        effects.append(f"grade {g} ({old_names[g]!r}) leaves the scale (no label uses it)")
    for g in sorted(set(new_names) & set(old_names), reverse=True):
        if new_names[g] != old_names[g]:
            n = in_use.get(g, 0)
            effects.append(f"grade {g} renamed {old_names[g]!r} → {new_names[g]!r}; the {n:,} label"
                           f"{'s' if n != 1 else ''} of grade {g} keep their grade")
    if [e[0] for e in old] != [e[0] for e in new] and not effects:
        effects.append("the grades are listed in a new order")
    if [list(e) for e in old] != [list(e) for e in new]:
        kept = sum(n for g, n in in_use.items() if g in new_names)
        effects.append(f"{kept:,} label{'s' if kept != 1 else ''} already given keep{'s' if kept == 1 else ''} "
                       f"{'its grade' if kept == 1 else 'their grades'}")
        result.changed.append(field_name)
        result.effects.extend(effects)
        return True
    return False


def _plot(campaign, settings, new_settings, values, result):
    from annotation.services.campaign_setup import DEFAULT_CHOICE_CANDIDATES, DEFAULT_CONTEXT, SetupInvalid, plot_settings
    from assessments.labels import DEFAULT_PLOT_SCALE
    from assessments.models import Layer

    old_scale = settings.get("plot_scale", DEFAULT_PLOT_SCALE)
    old_context = settings.get("context_sentences", DEFAULT_CONTEXT)
    try:
        checked = plot_settings(mode=settings.get("mode", "label"), scale=values.get("plot_scale", old_scale),
                                context_sentences=values.get("context_sentences", old_context),
                                choice_candidates=settings.get("choice_candidates", DEFAULT_CHOICE_CANDIDATES))
    except SetupInvalid as exc:
        raise SettingsChangeInvalid(exc.field, exc.message) from None
    except (TypeError, ValueError):
        raise SettingsChangeInvalid("plot_scale" if "plot_scale" in values else "context_sentences",
                                    "not a value this setting takes") from None
    if "plot_scale" in values and _scale_change(campaign, "plot_scale", Layer.PLOT_GRADE, old_scale,
                                                checked["plot_scale"], result):
        new_settings["plot_scale"] = checked["plot_scale"]
    if "context_sentences" in values and checked["context_sentences"] != old_context:
        new_settings["context_sentences"] = checked["context_sentences"]
        result.changed.append("context_sentences")
        result.effects.append(f"context {old_context} → {checked['context_sentences']} sentences on each side of a "
                              "candidate, from the assessors' next page")


def _adhoc(campaign, settings, new_settings, values, result):
    from annotation.services import adhoc
    from annotation.services.plot import SettingsInvalid
    from assessments.labels import DEFAULT_ADHOC_SCALE
    from assessments.models import Layer

    if "grade_scale" in values:
        try:
            old = adhoc.check_scale(settings.get("grade_scale", DEFAULT_ADHOC_SCALE))
            new = adhoc.check_scale(values["grade_scale"])
        except SettingsInvalid as exc:
            raise SettingsChangeInvalid("grade_scale", str(exc).removeprefix("grade_scale: ")) from None
        if _scale_change(campaign, "grade_scale", Layer.GRADE, old, new, result):
            new_settings["grade_scale"] = new
    if "adhoc_view" in values and values["adhoc_view"] != settings.get("adhoc_view", "one"):
        if values["adhoc_view"] not in adhoc.VIEWS:
            raise SettingsChangeInvalid("adhoc_view", f"expected one of {', '.join(adhoc.VIEWS)}")
        new_settings["adhoc_view"] = values["adhoc_view"]
        result.changed.append("adhoc_view")
        result.effects.append("documents shown " + ("one at a time" if values["adhoc_view"] == "one" else "in a list")
                              + " from the assessors' next page; labels given stay")
    if "evidence" in values and values["evidence"] != settings.get("evidence", True):
        if not isinstance(values["evidence"], bool):
            raise SettingsChangeInvalid("evidence", "true or false")
        new_settings["evidence"] = values["evidence"]
        result.changed.append("evidence")
        result.effects.append("assessors mark evidence passages from their next page" if values["evidence"] else
                              "assessors no longer mark evidence; the evidence already marked stays")


def _nugget_suggestions(campaign, settings, new_settings, values, result):
    """A nuggets campaign's creation pages show the LLM's nugget suggestions, or not (the default)."""
    if "nugget_suggestions" not in values or values["nugget_suggestions"] == settings.get("nugget_suggestions", False):
        return
    if "nugget_suggestions" not in tasks.of(campaign).settings:
        raise SettingsChangeInvalid("nugget_suggestions", "nuggets campaigns only")
    if not isinstance(values["nugget_suggestions"], bool):
        raise SettingsChangeInvalid("nugget_suggestions", "true or false")
    new_settings["nugget_suggestions"] = values["nugget_suggestions"]
    result.changed.append("nugget_suggestions")
    result.effects.append("the nugget creation pages show the LLM's suggestions from their next page"
                          if values["nugget_suggestions"] else
                          "the nugget creation pages no longer show the LLM's suggestions; nuggets taken from them stay")


def _topic_guidelines(campaign, settings, new_settings, values, result):
    """Instructions per topic, shown beside its narrative on the ad hoc and nugget pages: {topic id: text}, the
    topics the campaign's; a topic left out (or given "") has none."""
    from annotation.services.adhoc import GUIDELINES_MAX, TOPIC_GUIDELINES
    from annotation.services.campaigns import campaign_topics

    if TOPIC_GUIDELINES not in values:
        return
    given = values[TOPIC_GUIDELINES]
    if not isinstance(given, dict):
        raise SettingsChangeInvalid(TOPIC_GUIDELINES, "an object {topic id: instructions}")
    wanted = {}
    for topic, text in given.items():
        if not isinstance(text, str) or "\x00" in text or len(text) > GUIDELINES_MAX:
            raise SettingsChangeInvalid(f"{TOPIC_GUIDELINES}.{str(topic)[:50]}",
                                        f"text of at most {GUIDELINES_MAX:,} characters, no NUL")
        if text.strip():
            wanted[str(topic)] = " ".join(text.split())  # one paragraph: the console edits it as one line
    known = set(campaign_topics(campaign).filter(external_id__in=list(wanted)).values_list("external_id", flat=True))
    unknown = sorted(set(wanted) - known)
    if unknown:
        raise SettingsChangeInvalid(f"{TOPIC_GUIDELINES}.{unknown[0][:50]}", f"not a topic of campaign {campaign.name!r}")
    old = settings.get(TOPIC_GUIDELINES, {}) if isinstance(settings.get(TOPIC_GUIDELINES), dict) else {}
    if wanted == old:
        return
    if wanted:
        new_settings[TOPIC_GUIDELINES] = wanted
    else:
        new_settings.pop(TOPIC_GUIDELINES, None)
    changed = sorted(set(wanted) ^ set(old) | {t for t in wanted if t in old and wanted[t] != old[t]})
    result.changed.append(TOPIC_GUIDELINES)
    shown = ", ".join(changed[:10]) + (f" and {len(changed) - 10} more" if len(changed) > 10 else "")
    result.effects.append(f"the instructions of topic{'s' if len(changed) != 1 else ''} {shown} change on "
                          "assessors' next page")


def _prelabels(campaign, settings, new_settings, values, result):
    from annotation.services.prelabels import DEFAULT_BLIND_SHARE, PrelabelsInvalid, prelabels

    touched = False
    for key, default in (("show_machine_labels", False), ("machine_source", None), ("blind_share", DEFAULT_BLIND_SHARE)):
        if key in values and values[key] != settings.get(key, default):
            new_settings[key] = values[key]
            touched = True
    if not touched:
        return
    if not tasks.of(campaign).pooled:
        raise SettingsChangeInvalid(next(k for k in PRELABEL_KEYS if k in values), "plot and ad hoc campaigns only")
    probe = Campaign(pk=campaign.pk, task=campaign.task, settings=new_settings)
    try:
        shown = prelabels(probe)
    except PrelabelsInvalid as exc:
        name, _, message = str(exc).partition(": ")
        raise SettingsChangeInvalid(name, message or str(exc)) from None
    # The source is checked whenever it is set, pre-labels on or off (it is also the source whose scores order the
    # judging queue), and when pre-labels go on (a source stored before this rule: turning them on shows it).
    source_id = new_settings.get("machine_source") if shown.on or "machine_source" in values else None
    if source_id is not None:
        from assessments.models import MachineLabelSource

        if isinstance(source_id, bool) or not isinstance(source_id, int):
            raise SettingsChangeInvalid("machine_source", "expected the id of a machine label source")
        if not MachineLabelSource.objects.usable_by(campaign.pk).filter(pk=source_id).exists():
            raise SettingsChangeInvalid("machine_source", f"no machine label source {source_id} of this campaign")
    units = _open_units(campaign).filter(pool__isnull=False).count()
    result.changed.extend(k for k in PRELABEL_KEYS if k in values and values[k] != settings.get(k))
    if shown.on:
        result.effects.append(f"machine labels of source {shown.source_id} shown on the {_units_of(units)} not done, "
                              f"from their next page, except a blind {shown.blind_share:.0%} of the items")
    else:
        result.effects.append(f"machine labels no longer shown ({_units_of(units)} not done)")


def _judging_order(campaign, settings, new_settings, values, result):
    """A plot or ad hoc campaign's judging order (annotation.services.judging_order.order_settings, the rule the
    console's order form follows): the order, its stops, and the hybrid order's budget and machine source."""
    from annotation.services.campaigns import campaign_collections
    from annotation.services.judging_order import HYBRID, OrderSettingsInvalid, order_settings

    source_changed = "machine_source" in values and new_settings.get("machine_source") != settings.get("machine_source")
    touched = [k for k in ORDER_KEYS if k in values and values[k] != settings.get(k)]
    if not touched and not (source_changed and new_settings.get("judging_order") == HYBRID):
        return
    if not tasks.of(campaign).pooled:
        raise SettingsChangeInvalid((touched or ["machine_source"])[0], "plot and ad hoc campaigns only")
    merged = {**settings, **{k: values[k] for k in ORDER_KEYS if k in values}}
    try:
        checked = order_settings(order=merged.get("judging_order"), target_recall=merged.get("target_recall"),
                                 budget=merged.get("judging_budget"), min_rel=merged.get("judging_min_rel", 1),
                                 machine_source=new_settings.get("machine_source"), campaign_id=campaign.pk,
                                 hybrid_budget=merged.get("hybrid_budget"),
                                 collections=[c.name for c in campaign_collections(campaign)])
    except OrderSettingsInvalid as exc:
        raise SettingsChangeInvalid(exc.field, exc.message) from None
    checked.pop("machine_source", None)  # the pre-labels' setting too, stored by _prelabels
    new_settings.update(checked)
    result.changed.extend(touched)
    order = checked["judging_order"]
    was = settings.get("judging_order") or "shuffled"
    said = (f"judging order {was} → {order}" if was != order
            else f"judging order {order}: {', '.join(touched or ['machine_source'])} changed")
    if order == HYBRID:
        budget = checked["hybrid_budget"]
        said += (f" (budget {budget:.0%} of each pool" if isinstance(budget, float) else f" (budget {budget:,} "
                 "judgements on each pool") + f", machine source {new_settings.get('machine_source')})"
    result.effects.append(said + ": each assessor's next page serves it; labels given stay")


def _examples(campaign, settings, values, result):
    """The qualification's worked examples, checked against the campaign's scale as it will be (a scale changed in
    the same request checks the examples kept too)."""
    from annotation.services.qualification import check_examples

    stored = settings.get(EXAMPLES, [])
    if EXAMPLES not in values:
        if stored and any(k in result.changed for k in ("plot_scale", "grade_scale")):
            check_examples(campaign, stored)
        return
    checked = check_examples(campaign, values[EXAMPLES])
    if checked == stored:
        return
    campaign.settings[EXAMPLES] = checked
    result.changed.append(EXAMPLES)
    waiting = (Assignment.objects.filter(campaign=campaign, qualification=True).values("assessor_id").distinct()
               .exclude(assessor_id__in=Assignment.objects.filter(campaign=campaign, qualification=True).exclude(
                   status=Assignment.Status.TODO).values("assessor_id")).count())
    result.effects.append(
        f"{len(checked)} worked example{'s' if len(checked) != 1 else ''} shown to assessors before their "
        f"qualification; {waiting} assessor{'s' if waiting != 1 else ''} with qualification units not started "
        f"see {'them' if len(checked) != 1 else 'it'} first" if checked else "no worked examples shown any more")


# Overlap ------------------------------------------------------------------------------------------------------


def admin_values(campaign, changed_fields) -> dict:
    """The values change_settings takes from a campaign edited in the admin (unsaved, `changed_fields` its form's
    changed data): its model fields, and the settings keys of its JSON `settings` that differ from the stored."""
    stored = Campaign.objects.get(pk=campaign.pk)
    values = {name: getattr(campaign, name) for name in MODEL_FIELDS if name in changed_fields}
    if "settings" in changed_fields:
        old = stored.settings if isinstance(stored.settings, dict) else {}
        new = campaign.settings if isinstance(campaign.settings, dict) else {}
        for key in PLOT_KEYS + ADHOC_KEYS + PRELABEL_KEYS + (EXAMPLES,) + NUGGET_KEYS + TOPIC_KEYS + ORDER_KEYS:
            if key in new and new.get(key) != old.get(key):
                values[key] = new[key]
    return values


def _per_assessor(before, after) -> str:
    grown = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
    return ", ".join(f"{name} {n}" for name, n in sorted(grown.items()))


def _unit_counts(campaign) -> dict:
    return dict(Assignment.objects.filter(campaign=campaign).values_list("assessor__username")
                .annotate(n=Count("id")).order_by())


def _overlap(campaign, overlap, result, assessors, seed):
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 1 <= overlap <= 50:
        raise SettingsChangeInvalid("overlap", "a whole number from 1 to 50")
    old = campaign.overlap
    result.changed.append("overlap")
    own = CampaignTopic.objects.filter(campaign=campaign, overlap__isnull=False).count()
    kept = f"; {own} topic{'s' if own != 1 else ''} with {'their' if own != 1 else 'its'} own overlap keep it" if own else ""
    if overlap > old:
        from annotation.services.assignment import assign_campaign

        names = list(assessors) if assessors is not None else list(
            Assignment.objects.filter(campaign=campaign, qualification=False).order_by("assessor__username")
            .values_list("assessor__username", flat=True).distinct())
        before = _unit_counts(campaign)
        done = assign_campaign(campaign, names, overlap=overlap, seed=seed)
        per = _per_assessor(before, _unit_counts(campaign))
        people = len(per.split(", ")) if per else 0
        result.effects.append(
            f"overlap {old} → {overlap} adds {_units_of(done.created)} for {people} assessor{'s' if people != 1 else ''}"
            + (f" ({per})" if per else "") + kept)
        return
    campaign.overlap = overlap
    campaign.save(update_fields=["overlap"])
    back, stay = _take_back(campaign, overlap)
    stays = (f"; {stay:,} started unit{'s' if stay != 1 else ''} stay{'s' if stay == 1 else ''} with the assessors "
             "who began them, over the overlap") if stay else ""
    result.effects.append(f"overlap {old} → {overlap} takes back {back:,} unstarted unit{'s' if back != 1 else ''}"
                          + stays + kept)


def _take_back(campaign, overlap) -> tuple[int, int]:
    """Take back the unstarted work beyond `overlap` on each topic (the assessors given it last first); (units taken
    back, started units that stay beyond the overlap)."""
    from annotation.services.workload import take_back
    from assessments.models import Judgement

    own = set(CampaignTopic.objects.filter(campaign=campaign).filter(Q(overlap__isnull=False) | Q(qualification=True))
              .values_list("topic_id", flat=True))
    triage_pools = [p.pk for p in campaign.pools.all() if triage.is_triage_pool(p)]
    rows = (Assignment.objects.filter(campaign=campaign, qualification=False).exclude(topic_id__in=own)
            .exclude(pool_id__in=triage_pools).values("topic_id", "assessor_id")
            .annotate(units=Count("id"), last=Max("id"),
                      started=Count("id", filter=~Q(status=Assignment.Status.TODO))).order_by())
    judged = set(Judgement.objects.filter(campaign_id=campaign.pk, adjudicated=False)
                 .values_list("topic_id", "assessor_id").distinct())
    by_topic = defaultdict(list)
    for row in rows:
        row["begun"] = bool(row["started"]) or (row["topic_id"], row["assessor_id"]) in judged
        by_topic[row["topic_id"]].append(row)
    pairs, back, stay = [], 0, 0
    for topic_id, holders in sorted(by_topic.items()):
        extra = len(holders) - overlap
        if extra <= 0:
            continue
        for row in sorted((r for r in holders if not r["begun"]), key=lambda r: -r["last"])[:extra]:
            pairs.append((row["assessor_id"], topic_id))
            back += row["units"]
            extra -= 1
        if extra > 0:
            stay += sum(r["units"] for r in holders if r["begun"])
    if pairs:
        take_back(campaign, pairs)
    return back, stay
