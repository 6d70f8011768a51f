"""The console's forms: typed fields with their defaults and help. They parse and check the input's shape; the
services check the rest (the same rules as the manage.py commands), and their errors are put on these fields."""

from functools import cached_property

from django import forms
from django.core.validators import validate_slug

from annotation import importers
from annotation.models import DataImport, Track
from annotation.roles import Role
from annotation.services.campaign_setup import DEFAULT_CHOICE_CANDIDATES, DEFAULT_CONTEXT, PLOT_MODES
from annotation.services.data_imports import kinds_for
from annotation.services.judging_order import ORDER_LABELS, ORDERS, SHUFFLED
from annotation.units import tasks
from assessments.labels import DEFAULT_ADHOC_SCALE, DEFAULT_PLOT_SCALE
from assessments.machine.annotator import ZERO_SHOT, ZERO_SHOT_SHARE
from assessments.models import Pool
from assessments.services.runs import run_labels
from config.ids import natural_key, parse_id
from retrieval import fusion


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files from one input. An empty file is taken: its importer lists it with the other problems."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        kwargs.setdefault("allow_empty_file", True)
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(d, initial) for d in data if d] or ([] if not self.required else [single(None, initial)])
        return [single(data, initial)] if data else []


def _lines(text):
    return [line.strip() for line in (text or "").replace(",", " ").split() if line.strip()]


def scale_text(scale) -> str:
    return "\n".join(f"{value} {label}" for value, label in scale)


class ServiceErrorsMixin:
    """Put a service's error (field, message) on the form: beside its field, or on top."""

    def add_service_error(self, field, message):
        self.add_error(field if field in self.fields else None, message)


class JudgingOrderFields(forms.Form):
    """The judging order of a plot-labels campaign (annotation.services.judging_order), on the new-campaign form and
    on a campaign's home."""

    judging_order = forms.ChoiceField(
        choices=[(o, ORDER_LABELS[o]) for o in ORDERS], initial=SHUFFLED, required=False, label="Judging order",
        help_text="Plot and ad hoc campaigns: serve each assessor the next candidate of this order, computed from "
                  "everyone's judgements so far, or show every candidate shuffled.",
    )
    target_recall = forms.IntegerField(
        min_value=1, max_value=100, required=False, label="Stop at estimated recall (%)",
        help_text="A topic stops when its estimated recall (pessimistic end of the interval) reaches this "
                  "(empty: never on the estimate).",
    )
    judging_budget = forms.IntegerField(min_value=1, required=False, label="Budget per topic",
                                        help_text="A topic stops after this many judgements (empty: no budget).")
    machine_source = forms.IntegerField(
        min_value=1, required=False, label="Machine label source",
        help_text="For the machine and hybrid orders: the id of the source whose scores order the queue (never "
                  "shown).",
    )
    hybrid_budget = forms.CharField(
        max_length=20, required=False, label="Hybrid budget",
        help_text="For the hybrid order: the judgements people make on the pool, a share (0.1 or 10%) or a count "
                  "(500); the calibrated machine labels fill the rest.",
    )

    def order_settings(self, campaign=None) -> dict:
        """The order's settings, checked; `campaign` the one they are for (None: a new campaign, whose collection
        is the form's)."""
        from annotation.services.campaigns import campaign_collections
        from annotation.services.judging_order import order_settings

        data = self.cleaned_data
        target = data.get("target_recall")
        if campaign is not None:
            collections = [c.name for c in campaign_collections(campaign)]
        else:
            collections = [data["collection"]] if data.get("collection") else None
        return order_settings(order=data.get("judging_order") or SHUFFLED,
                              target_recall=None if target is None else target / 100,
                              budget=data.get("judging_budget"), machine_source=data.get("machine_source"),
                              campaign_id=campaign.pk if campaign is not None else None,
                              hybrid_budget=data.get("hybrid_budget") or None, collections=collections)


class JudgingOrderForm(ServiceErrorsMixin, JudgingOrderFields):
    """A campaign's judging order, edited on its home (its ids prefixed: the settings form there has a
    machine_source too)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "order-%s")
        super().__init__(*args, **kwargs)
        self.fields["judging_order"].required = True


class CampaignForm(ServiceErrorsMixin, JudgingOrderFields, forms.Form):
    """A new campaign: what is judged, which topics, how it is given out and checked."""

    TOPICS_ALL, TOPICS_PICK, TOPICS_FILE = "all", "pick", "file"

    name = forms.SlugField(max_length=100, help_text="Short name in addresses and files: letters, digits, - and _.")
    title = forms.CharField(max_length=300, required=False, help_text="A longer title assessors see.")
    task = forms.ChoiceField(choices=[(task.task, task.task.label) for task in tasks.TASKS.values()],
                             initial=next(iter(tasks.TASKS)),
                             help_text="Outline judging of CAR articles, plot-retrieval labelling, ad hoc relevance of "
                                       "documents to TREC topics, or nuggets of generated answers (TREC RAG: nugget "
                                       "banks, then support and citations).")
    collection = forms.CharField(
        max_length=100, required=False,
        help_text="The collection judged: pick one, or type a new name when the topic file below creates it "
                  "(CAR outlines default to car-y3; a plot campaign is about one book, named by its slug).",
        validators=[validate_slug],
    )
    topics_from = forms.ChoiceField(
        choices=[(TOPICS_ALL, "Every topic of the collection"), (TOPICS_PICK, "The topics I pick below"),
                 (TOPICS_FILE, "The topics of a file I upload")],
        initial=TOPICS_ALL, widget=forms.RadioSelect, label="Topics",
    )
    topics = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), label="Picked topics",
        help_text="Topic ids, separated by spaces or new lines (search the list below and tick them).",
    )
    topic_file = forms.FileField(
        required=False, label="Topic file", allow_empty_file=True,  # an empty file is a problem of the import's table
        help_text="CAR outlines (the Y3 JSON cast file or an official .cbor outlines file) for outline campaigns; "
                  "plot queries (JSON lines with query_id, book, query, ground_truth_text) for plot campaigns. "
                  "Ad hoc and nuggets campaigns take their topics from the collection (the Data page's Ad hoc "
                  "topics). Checked whole: any problem and nothing is made.",
    )
    guidelines = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 6}),
        help_text="Shown to assessors on every page. Markdown: *emphasis*, **bold**, lists, [links](https://…), "
                  "tables; HTML is shown as text.",
    )
    overlap = forms.IntegerField(min_value=1, max_value=50, initial=1,
                                 help_text="Assessors per topic (each of them judges all the topic's units).")
    qualification_topics = forms.CharField(
        required=False, label="Qualification topics",
        help_text="Topic ids every assessor judges first, scored against the gold qrels (empty: no qualification).",
    )
    qualification_gold = forms.CharField(required=False, max_length=100, label="Gold qrel set",
                                         help_text="The qrel set of known answers (import it on the Data page).")
    qualification_threshold = forms.IntegerField(min_value=0, max_value=100, initial=90, label="Pass mark (%)",
                                                 help_text="Share of qualification items an assessor must get right to start formal work.")
    qualification_attempts = forms.IntegerField(min_value=1, max_value=20, initial=2, label="Attempts")
    review_sample_size = forms.IntegerField(min_value=0, max_value=1000, initial=10, label="Review sample",
                                            help_text="Items a reviewer checks of each finished batch (0: no review).")
    review_threshold = forms.IntegerField(min_value=0, max_value=100, initial=95, label="Review pass mark (%)",
                                          help_text="Share of a reviewed sample that must be right; under it the batch goes back to its assessor.")
    show_run_names = forms.BooleanField(
        required=False, label="Show run names to assessors",
        help_text="Off (the default), judging is blind: assessors never see which run wrote an article.",
    )
    mode = forms.ChoiceField(
        choices=[("label", "Label each candidate (grade and query spans)"),
                 ("choice", "Forced choice: pick the plot among N candidates"), ("pair", "Rate pairs 1–10")],
        initial="label", label="Plot mode", help_text="Plot campaigns only.",
    )
    plot_scale = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), initial=scale_text(DEFAULT_PLOT_SCALE), label="Grade scale",
        help_text="One answer a line, best first: the grade (a whole number) then its label.",
    )
    grade_scale = forms.ChoiceField(
        choices=[("dl", "0–3: Irrelevant, Related, Highly, Perfectly relevant (TREC Deep Learning)"),
                 ("robust", "0–2: Not relevant, Relevant, Highly relevant (TREC Robust)"),
                 ("binary", "0–1: Not relevant, Relevant")],
        initial=DEFAULT_ADHOC_SCALE, required=False, label="Relevance scale", help_text="Each grade has its key and a line saying when it applies.",
    )
    adhoc_view = forms.ChoiceField(
        choices=[("one", "One document at a time"), ("list", "Every document in a list")], initial="one",
        required=False, label="Documents shown",
    )
    evidence = forms.BooleanField(
        required=False, initial=True, label="Assessors mark evidence",
        help_text="The passages of a document that make it relevant, kept as character offsets (optional for them).",
    )
    context_sentences = forms.IntegerField(min_value=0, max_value=50, initial=DEFAULT_CONTEXT,
                                           help_text="Sentences shown on each side of a plot candidate.")
    choice_candidates = forms.IntegerField(min_value=2, max_value=50, initial=DEFAULT_CHOICE_CANDIDATES,
                                           label="Candidates per forced choice",
                                           help_text="How many passages each choice offers: the one that tells the plot and N − 1 others.")
    max_runs = forms.IntegerField(min_value=1, max_value=Track.LIMIT_MAX, required=False, label="Runs per participant",
                                  help_text="Runs a participant team may upload (empty: the site's default).")
    max_per_topic = forms.IntegerField(min_value=1, max_value=Track.LIMIT_MAX, required=False,
                                       label="Passages per topic in a run",
                                       help_text="Empty: 20 for CAR articles (Y3), 1000 for TREC runs.")

    def clean_plot_scale(self):
        scale = _scale_lines(self.cleaned_data.get("plot_scale"), described=False)
        if scale is None:
            raise forms.ValidationError("give at least two answers")
        return scale

    def clean(self):
        data = super().clean()
        data["topic_ids"] = _lines(data.get("topics"))
        data["qualification_ids"] = _lines(data.get("qualification_topics"))
        if data.get("topics_from") == self.TOPICS_PICK and not data["topic_ids"]:
            self.add_error("topics", "pick at least one topic")
        if data.get("topics_from") == self.TOPICS_FILE and not data.get("topic_file"):
            self.add_error("topic_file", "choose the topic file")
        return data


class CampaignSettingsForm(ServiceErrorsMixin, forms.Form):
    """A campaign's settings, changed on its home (annotation.services.campaign_settings says what each change does
    to the work already done, and applies it once confirmed)."""

    title = forms.CharField(max_length=300, required=False, help_text="A longer title assessors see.")
    guidelines = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}),
                                 help_text="Shown to assessors on every page (Markdown).")
    overlap = forms.IntegerField(min_value=1, max_value=50, help_text="Assessors per topic (k). Up: the named "
                                 "assessors below are given the missing units; down: unstarted units are taken back.")
    assessors = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                          help_text="Who may be given more work when the overlap goes up.")
    show_run_names = forms.BooleanField(required=False, label="Show run names to assessors",
                                        help_text="Off: judging is blind.")
    review_sample_size = forms.IntegerField(min_value=0, max_value=1000, label="Review sample",
                                            help_text="Items a reviewer checks of each finished batch (0: no review).")
    review_threshold = forms.IntegerField(min_value=0, max_value=100, label="Review pass mark (%)")
    qualification_threshold = forms.IntegerField(min_value=0, max_value=100, label="Qualification pass mark (%)")
    qualification_attempts = forms.IntegerField(min_value=1, max_value=20, label="Qualification attempts",
                                                help_text="Raise it to give those who failed a retake.")
    plot_scale = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4}), label="Grade scale",
                                 help_text="One answer a line, best first: the grade then its label. A grade may be "
                                           "added or renamed; one that labels use cannot go.")
    context_sentences = forms.IntegerField(min_value=0, max_value=50, required=False,
                                           help_text="Sentences shown on each side of a plot candidate.")
    grade_scale = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), label="Relevance scale",
        help_text="One grade a line, best first: the grade (0-9), its name, then | and when it applies. A grade "
                  "may be added or renamed; one that labels use cannot go.")
    adhoc_view = forms.ChoiceField(choices=[("one", "One document at a time"), ("list", "Every document in a list")],
                                   required=False, label="Documents shown")
    evidence = forms.BooleanField(required=False, label="Assessors mark evidence")
    show_machine_labels = forms.BooleanField(required=False, label="Show machine labels to assessors",
                                             help_text="Pre-labels: a machine label source's grade beside each "
                                                       "candidate, except a blind share.")
    machine_source = forms.IntegerField(min_value=1, required=False, label="Machine label source",
                                        help_text="Its id (the Machine page lists them).")
    blind_share = forms.IntegerField(min_value=0, max_value=100, required=False, label="Blind share (%)",
                                     help_text="Items that never show a machine label (the calibration set).")
    nugget_suggestions = forms.BooleanField(
        required=False, label="Show the LLM's nugget suggestions",
        help_text="On the nugget creation pages, the suggestions of `llm_nuggets suggest` (the Machine page), "
                  "for assessors to take and edit; off, nothing of them reaches the page.")
    worked_examples = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), label="Qualification's worked examples",
        help_text="Shown to assessors before their qualification, one a line: topic id, passage id, the grade "
                  "expected, then | and why (e.g. '401 D1-0 1 | It names the proposal'). Not on qualification topics.")
    topic_guidelines = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), label="Instructions per topic",
        help_text="Shown beside a topic's narrative on the judging pages, one topic a line: its id, a colon, then "
                  "the instructions (e.g. '301: Count reports of proposals only, not of built farms'). A topic "
                  "left out has none.")
    confirm = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, campaign, assessors=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        self.fields["assessors"].choices = [(name, name) for name in assessors]
        task = tasks.of(campaign)
        hidden = tasks.settings_keys() - set(task.settings)  # the other tasks' own settings
        if not task.pooled:
            hidden |= {"show_machine_labels", "machine_source", "blind_share"}
        for name in hidden:
            del self.fields[name]

    @classmethod
    def initial_of(cls, campaign, assessors) -> dict:
        """The form's values for the campaign as it is now."""
        from annotation.services import adhoc
        from annotation.services.prelabels import DEFAULT_BLIND_SHARE

        settings = campaign.settings if isinstance(campaign.settings, dict) else {}
        initial = {
            "title": campaign.title, "guidelines": campaign.guidelines, "overlap": campaign.overlap,
            "assessors": list(assessors), "show_run_names": campaign.show_run_names,
            "review_sample_size": campaign.review_sample_size,
            "review_threshold": round(campaign.review_threshold * 100),
            "qualification_threshold": round(campaign.qualification_threshold * 100),
            "qualification_attempts": campaign.qualification_attempts,
            "plot_scale": scale_text(settings.get("plot_scale", DEFAULT_PLOT_SCALE)),
            "context_sentences": settings.get("context_sentences", DEFAULT_CONTEXT),
            "adhoc_view": settings.get("adhoc_view", "one"), "evidence": settings.get("evidence", True),
            "show_machine_labels": settings.get("show_machine_labels", False),
            "nugget_suggestions": settings.get("nugget_suggestions", False),
            "machine_source": settings.get("machine_source"),
            "blind_share": round(settings.get("blind_share", DEFAULT_BLIND_SHARE) * 100),
        }
        guidelines = settings.get("topic_guidelines")
        initial["topic_guidelines"] = "\n".join(  # one line a topic (a line break the API kept reads as a space)
            f"{topic}: {' '.join(str(guidelines[topic]).split())}" for topic in sorted(guidelines, key=natural_key)
        ) if isinstance(guidelines, dict) else ""
        initial["worked_examples"] = "\n".join(
            f"{e.get('topic')} {e.get('passage')} {e.get('grade')} | {e.get('explanation', '')}"
            for e in settings.get("worked_examples") or [] if isinstance(e, dict))
        if "grade_scale" in tasks.of(campaign).settings:
            try:
                scale = adhoc.grade_scale(campaign)
            except ValueError:
                scale = []
            initial["grade_scale"] = "\n".join(f"{v} {name} | {text}" if text else f"{v} {name}" for v, name, text in scale)
        return initial

    def clean_plot_scale(self):
        return _scale_lines(self.cleaned_data.get("plot_scale"), described=False)

    def clean_grade_scale(self):
        return _scale_lines(self.cleaned_data.get("grade_scale"), described=True)

    def clean_worked_examples(self):
        examples = []
        for n, line in enumerate((self.cleaned_data.get("worked_examples") or "").splitlines(), start=1):
            if not line.strip():
                continue
            head, bar, why = line.partition("|")
            parts = head.split()
            grade = parse_id(parts[2], minimum=0) if len(parts) == 3 else None
            if not bar or grade is None:
                raise forms.ValidationError(f"line {n}: expected 'topic passage grade | why'")
            examples.append({"topic": parts[0], "passage": parts[1], "grade": grade, "explanation": why.strip()})
        return examples

    def clean_topic_guidelines(self):
        found = {}
        for n, line in enumerate((self.cleaned_data.get("topic_guidelines") or "").splitlines(), start=1):
            if not line.strip():
                continue
            topic, colon, text = line.partition(":")
            if not colon or not topic.strip() or not text.strip():
                raise forms.ValidationError(f"line {n}: expected 'topic id: instructions'")
            if topic.strip() in found:
                raise forms.ValidationError(f"line {n}: topic {topic.strip()!r} again (one line a topic)")
            found[topic.strip()] = text.strip()
        return found

    def values(self) -> dict:
        """The settings as annotation.services.campaign_settings.change_settings takes them."""
        data = self.cleaned_data
        values = {name: data.get(name) for name in (
            "title", "guidelines", "overlap", "show_run_names", "review_sample_size", "qualification_attempts")}
        values["review_threshold"] = data["review_threshold"] / 100
        values["qualification_threshold"] = data["qualification_threshold"] / 100
        if "plot_scale" in self.fields:
            values["plot_scale"] = data.get("plot_scale") or None
            values["context_sentences"] = data.get("context_sentences")
        if "grade_scale" in self.fields:
            values["grade_scale"] = data.get("grade_scale") or None
            values["adhoc_view"] = data.get("adhoc_view") or None
            values["evidence"] = data.get("evidence")
        if "worked_examples" in self.fields:
            values["worked_examples"] = data.get("worked_examples") or []
        if "nugget_suggestions" in self.fields:
            values["nugget_suggestions"] = bool(data.get("nugget_suggestions"))
        if "topic_guidelines" in self.fields:
            values["topic_guidelines"] = data.get("topic_guidelines") or {}
        if "show_machine_labels" in self.fields:
            values["show_machine_labels"] = data.get("show_machine_labels")
            if data.get("machine_source") is not None:
                values["machine_source"] = data["machine_source"]
            if data.get("blind_share") is not None:
                values["blind_share"] = data["blind_share"] / 100
        return values


def _scale_lines(text, *, described):
    """[[grade, label(, description)]] from "grade label[ | description]" lines; None when empty."""
    scale = []
    for n, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        head, _, description = line.partition("|") if described else (line, "", "")
        value, _, label = head.strip().partition(" ")
        grade = parse_id(value, minimum=0)
        if grade is None or not label.strip():
            raise forms.ValidationError(f"line {n}: expected a whole number and a label, e.g. '2 Describes it'")
        scale.append([grade, label.strip(), description.strip()] if described else [grade, label.strip()])
    if not scale:
        return None
    if len(scale) < 2:
        raise forms.ValidationError("give at least two answers")
    if len({e[0] for e in scale}) != len(scale):
        raise forms.ValidationError("each answer needs its own grade")
    return scale


TOPIC_FORMATS = [("auto", "Told from the content"), ("trec", "Classic TREC (<top> <num> <title> <desc> <narr>)"),
                 ("xml", "Web-track XML (<topic number=…>)"), ("tsv", "TSV (qid, text)"), ("jsonl", "JSON lines")]
DOCUMENT_FORMATS = [("auto", "Told from the content"), ("sgml", "TREC SGML (<DOC> <DOCNO> <TEXT>)"),
                    ("jsonl", "JSON lines (Pyserini id/contents, BEIR _id/title/text)"),
                    ("tsv", "TSV (id, text; id, title, text)")]
DOCUMENT_ENCODINGS = [("utf-8", "UTF-8"), ("latin-1", "Latin-1 (ISO 8859-1)"), ("cp1252", "Windows-1252")]


class UploadForm(ServiceErrorsMixin, forms.Form):
    """Files to import, with the options of their importer: which fields a kind takes, and how each gives its
    option, is the kind's registration's (assessments.importers.registry); here only how each field looks."""

    kind = forms.ChoiceField(choices=DataImport.Kind.choices, label="What the files are")
    files = MultipleFileField(help_text="Plain or gzipped (topics and documents: bzip2 or xz too). Several CAR run "
                                        "or document files may go at once.")
    collection = forms.CharField(max_length=100, required=False, validators=[validate_slug],
                                 help_text="The collection the files are about (TREC runs, qrels, topics, documents; "
                                           "CAR defaults to car-y3). On a campaign's page: the campaign's collection.")
    create_topics = forms.BooleanField(required=False, initial=True, label="Create the topics the runs name",
                                       help_text="CAR runs: unknown pages become topics (their title and facets).")
    create_missing = forms.BooleanField(required=False, label="Create missing topics and documents",
                                        help_text="TREC runs, qrels and answers: unknown ids are created (documents without "
                                                  "text; answers: documents only).")
    name = forms.CharField(max_length=100, required=False, label="Run or qrel set name",
                           help_text="TREC runs: default the file's tag; qrels: default the file name.")
    title = forms.CharField(max_length=300, required=False, label="Book title", help_text="Books only.")
    slug = forms.SlugField(max_length=100, required=False, label="Book slug",
                           help_text="Books: the book's short name and its collection's (default: the file name).")
    sentences_per_chunk = forms.IntegerField(min_value=1, max_value=50, initial=3, required=False,
                                             label="Sentences per chunk",
                                             help_text="Books: m, the sentences of one plot candidate (default 3).")
    topic_format = forms.ChoiceField(choices=TOPIC_FORMATS, initial="auto", required=False, label="Topics format")
    document_format = forms.ChoiceField(choices=DOCUMENT_FORMATS, initial="auto", required=False,
                                        label="Documents format")
    update = forms.BooleanField(required=False, label="Replace what the collection has",
                                help_text="Topics and documents: those already in the collection are replaced "
                                          "(else refused). Placeholders that runs or qrels made (documents "
                                          "without text) are filled in either way.")
    retext_judged = forms.BooleanField(required=False, label="Change the text of judged documents",
                                       help_text="Documents, with “Replace”: a judged document's new text is taken, "
                                                 "and the report says how many judgements then stand for it; else "
                                                 "it is refused. Text under evidence spans never changes.")
    only_needed = forms.BooleanField(required=False, label="Only the documents judging needs",
                                     help_text="Documents: only those the collection's runs, pools, qrels and "
                                               "answers name (upload those first).")
    encoding = forms.ChoiceField(choices=DOCUMENT_ENCODINGS, initial="utf-8", required=False, label="Text encoding",
                                 help_text="Documents: UTF-8, or the 8-bit encoding of old TREC disks.")
    bad_bytes = forms.BooleanField(required=False, label="Replace bytes the encoding cannot read",
                                   help_text="Documents: such a byte becomes \N{REPLACEMENT CHARACTER} and the report "
                                             "names its place (web crawls mix encodings); else the file is refused.")

    def __init__(self, *args, kinds=None, **kwargs):
        super().__init__(*args, **kwargs)
        kinds = kinds or kinds_for(None)  # the site's page: no campaign's own kinds (nugget files)
        self.fields["kind"].choices = [(k.value, k.label) for k in kinds]

    @staticmethod
    def fields_of(kind) -> list[str]:
        """The fields that give `kind`'s options (its registration's options the console offers)."""
        return [o.console_field for o in importers.get(kind).options if o.console_field]

    @cached_property
    def option_kinds(self) -> dict[str, str]:
        """{field: the kinds that take it, space-separated}: the page shows a field for those kinds only."""
        kinds = {}
        for kind in DataImport.Kind:
            for field in self.fields_of(kind):
                kinds.setdefault(field, []).append(kind.value)
        return {field: " ".join(names) for field, names in kinds.items()}

    def options(self) -> dict:
        """The chosen kind's options, each read from its field as its registration says."""
        return {o.name: o.read(self.cleaned_data) for o in importers.get(self.cleaned_data["kind"]).options
                if o.console_field}


class PoolForm(ServiceErrorsMixin, forms.Form):
    """A pool of the campaign's runs and/or our retrievers."""

    name = forms.SlugField(max_length=100, help_text="The pool's name (a slug).")
    runs = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                     help_text="Runs of the campaign's collection to pool.")
    bm25 = forms.BooleanField(required=False, label="BM25", help_text="Our BM25 over the collection.")
    dense = forms.BooleanField(required=False, label="Dense encoder",
                               help_text="A bi-encoder with a FAISS index (default: the bundled all-MiniLM-L6-v2).")
    encoder = forms.CharField(required=False, max_length=300, label="Encoder",
                              help_text="A Hugging Face model name or a folder on the workers (empty: the default).")
    rerankers = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Cross-encoders",
                                help_text="Re-ranking models, one a line (strategy: re-ranked union).")
    strategy = forms.ChoiceField(choices=Pool.Strategy.choices, initial=Pool.Strategy.UNION,
                                 help_text="Union: every passage some run ranks within the depth (TREC). Fusion: "
                                           "the runs fused, best first. Re-ranked: the union re-scored by the "
                                           "cross-encoders.")
    fusion = forms.ChoiceField(choices=[(m, m) for m in fusion.METHODS], initial="rrf",
                               help_text="For fusion: RRF (k=60), CombSUM or CombMNZ.")
    depth = forms.IntegerField(min_value=1, max_value=10_000, initial=20, help_text="How deep into each run (k).")
    per_topic = forms.IntegerField(min_value=1, required=False, label="Per-topic cut",
                                   help_text="At most this many candidates a topic (empty: all).")
    topics = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Only these of the campaign's topics (ids; empty: all of them).")
    only_ranked = forms.BooleanField(required=False, initial=True, label="Only topics the runs rank",
                                     help_text="Leave out the campaign's topics none of the chosen runs ranks.")

    def __init__(self, *args, runs=(), **kwargs):
        super().__init__(*args, **kwargs)
        labels = run_labels(runs)  # owner/name where teams share a name (assessments.services.runs)
        self.fields["runs"].choices = [(str(r.pk), labels[r.pk]) for r in runs]

    def clean(self):
        data = super().clean()
        data["topic_ids"] = _lines(data.get("topics"))
        data["reranker_list"] = [line.strip() for line in (data.get("rerankers") or "").splitlines() if line.strip()]
        return data


ROLE_CHOICES = [(Role.ASSESSOR.value, "Assessor"), (Role.REVIEWER.value, "Reviewer"),
                (Role.ORGANISER.value, "Organiser"), (Role.PARTICIPANT.value, "Participant")]


class PersonForm(ServiceErrorsMixin, forms.Form):
    """A new person."""

    username = forms.CharField(max_length=150, help_text="What they sign in with: letters, digits and @.+-_")
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, initial=[Role.ASSESSOR.value],
                                      widget=forms.CheckboxSelectMultiple)
    sign_in = forms.ChoiceField(
        choices=[("password", "A password I hand over (shown once)"),
                 ("link", "A one-time sign-in link (they choose a password; valid 3 days)")],
        initial="password", widget=forms.RadioSelect, label="Signing in",
    )
    email = forms.EmailField(required=False, help_text="Optional.")
    reviewer_of = forms.ChoiceField(required=False, label="Reviewer of campaign",
                                    help_text="Reviewers: the campaign whose batches they review (empty: any).")

    def __init__(self, *args, campaigns=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reviewer_of"].choices = [("", "—")] + [(c.name, c.name) for c in campaigns]


class TokenForm(ServiceErrorsMixin, forms.Form):
    """An API token (a participant team's, or an organiser's for scripts)."""

    name = forms.CharField(max_length=150, label="Team or person",
                           help_text="A participant team (made if new) or an existing organiser.")
    role = forms.ChoiceField(choices=[("participant", "Participant team: uploads runs"),
                                      ("organiser", "Organiser: scripts")], initial="participant")
    campaign = forms.ChoiceField(required=False, help_text="The campaign the token acts on (empty: all; organisers only).")

    def __init__(self, *args, campaigns=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["campaign"].choices = [("", "—")] + [(c.name, c.name) for c in campaigns]


class AssignForm(ServiceErrorsMixin, forms.Form):
    """Give the campaign's units to assessors with overlap."""

    assessors = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple,
                                          help_text="The assessors who share the work.")
    overlap = forms.IntegerField(min_value=1, max_value=50, help_text="Assessors per topic (k).")
    seed = forms.IntegerField(initial=0, help_text="Ties in load are broken in an order drawn from it.")
    likely_source = forms.TypedChoiceField(
        coerce=int, required=False, empty_value=None, label="More assessors for likely-relevant candidates",
        help_text="Triage (plot and ad hoc campaigns): the candidates this machine label source scores at least the "
                  "threshold also go to extra assessors, who see only those candidates and never a score.")
    likely_threshold = forms.FloatField(initial=0.5, required=False, label="Score at least",
                                        help_text="A classifier's probability of relevant, an LLM's grade 0–3, or a "
                                                  "zero-shot source's grade (1: the top share of each topic it "
                                                  "labels relevant; 0.5 takes those).")
    likely_extra = forms.IntegerField(min_value=1, max_value=20, initial=1, required=False, label="Extra assessors")

    stage = forms.ChoiceField(
        choices=[("support", "Nugget support: a unit per answer, its support of each nugget of the topic's bank"),
                 ("create", "Nugget creation: a unit per topic, to write its nugget bank"),
                 ("citations", "Citation support (optional): a unit per answer that cites, whether each cited "
                               "passage supports its sentence")],
        required=False, widget=forms.RadioSelect, label="Nugget stage",
        help_text="Nuggets campaigns: which units this assignment makes (stored on the campaign, as "
                  "assign_campaign --stage does).")

    def __init__(self, *args, assessors=(), sources=(), nuggets=False, **kwargs):
        super().__init__(*args, **kwargs)
        if not nuggets:
            del self.fields["stage"]
        self.fields["assessors"].choices = [(u.username, u.username) for u in assessors]
        self.fields["likely_source"].choices = [("", "– (no triage)")] + [(s.pk, f"{s.name} (#{s.pk})") for s in sources]

    def likely(self):
        """The triage option (annotation.services.triage.LikelyRelevant), or None."""
        from annotation.services.triage import LikelyRelevant

        data = self.cleaned_data
        if data.get("likely_source") is None:
            return None
        threshold = data.get("likely_threshold")
        return LikelyRelevant(data["likely_source"], 0.5 if threshold is None else threshold,
                              data.get("likely_extra") or 1)


# Machine assistance (/campaigns/<name>/machine/): the options of train_annotator, machine_label and llm_judge.


class TrainAnnotatorForm(ServiceErrorsMixin, forms.Form):
    """An auto-annotator: what it learns from, the base model, the cross-validation and the training."""

    learn_from = forms.ChoiceField(
        choices=[("campaign", "This campaign's judgements (majority over its assessors)"),
                 ("qrels", "A qrel set over one of the campaign's pools (a candidate it does not list is 0)")],
        initial="campaign", widget=forms.RadioSelect, label="Learn from",
    )
    qrels = forms.ChoiceField(required=False, label="Qrel set", help_text="With a qrel set: its name.")
    pool = forms.ChoiceField(required=False, help_text="With a qrel set: the candidates to learn from.")
    topics = forms.CharField(required=False, label="Only these topics",
                             help_text="Topic ids (empty: all), e.g. the share people judged.")
    model_choice = forms.ChoiceField(
        choices=[("features", "Rank, BM25 and encoder features with logistic regression (seconds on a CPU)"),
                 ("minilm", "Fine-tune the bundled all-MiniLM-L6-v2 (a GPU worker's job)"),
                 ("other", "Fine-tune another Hugging Face model")],
        initial="features", widget=forms.RadioSelect, label="Model",
    )
    model_name = forms.CharField(required=False, max_length=300, label="Model name or folder",
                                 help_text="A Hugging Face encoder or cross-encoder: organisation/model, or a folder "
                                           "on the workers holding one.")
    run_blind = forms.BooleanField(required=False, label="Run-blind (for filled qrels)",
                                   help_text="The features model reads no run's rank or score: train the annotator "
                                             "whose labels fill qrels that rank those same runs with it.")
    folds = forms.IntegerField(min_value=2, max_value=20, initial=5, label="Folds (k)",
                               help_text="Measured by k-fold cross-validation before it labels anything.")
    epochs = forms.IntegerField(min_value=1, max_value=50, initial=1)
    max_length = forms.IntegerField(min_value=8, max_value=512, initial=256, label="Tokens per pair")
    batch_size = forms.IntegerField(min_value=1, max_value=512, initial=16, label="Batch size")
    learning_rate = forms.FloatField(min_value=1e-8, max_value=0.5, initial=3e-5, label="Learning rate")
    threshold = forms.IntegerField(min_value=0, max_value=10, initial=1, label="Relevant from grade",
                                   help_text="A human grade at least this is relevant.")
    max_examples = forms.IntegerField(min_value=2, required=False, label="At most this many labels",
                                      help_text="A sample of the labels, for a quick run (empty: all).")
    name = forms.CharField(required=False, max_length=200, help_text="Default annotator-ID.")

    def __init__(self, *args, qrel_sets=(), pools=(), **kwargs):
        kwargs.setdefault("auto_id", "train-%s")  # its inputs' ids: the Machine page's other forms share its names
        super().__init__(*args, **kwargs)
        self.fields["qrels"].choices = [("", "–")] + [(n, n) for n in qrel_sets]
        self.fields["pool"].choices = [("", "–")] + [(n, n) for n in pools]

    def clean(self):
        data = super().clean()
        data["topic_ids"] = _lines(data.get("topics"))
        if data.get("model_choice") == "other" and not (data.get("model_name") or "").strip():
            self.add_error("model_name", "name the model, or choose the bundled one")
        choice = data.get("model_choice") or "features"
        data["model"] = (data.get("model_name") or "").strip() if choice == "other" else choice
        if data.get("learn_from") == "qrels":
            for field in ("qrels", "pool"):
                if not data.get(field):
                    self.add_error(field, "choose one to learn from a qrel set")
        return data


class MachineLabelForm(ServiceErrorsMixin, forms.Form):
    """A trained annotator labels the unjudged candidates of chosen pools."""

    annotator = forms.TypedChoiceField(coerce=int, help_text="One of this campaign's trained annotators.")
    pools = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    include_judged = forms.BooleanField(required=False, label="Label the candidates people judged too",
                                        help_text="To compare with them; the pairs it was trained on are flagged.")

    def __init__(self, *args, annotators=(), pools=(), **kwargs):
        kwargs.setdefault("auto_id", "label-%s")  # its inputs' ids: the Machine page's other forms have pools too
        super().__init__(*args, **kwargs)
        self.fields["annotator"].choices = [(s.pk, f"{s.name} (#{s.pk})") for s in annotators]
        self.fields["pools"].choices = [(n, n) for n in pools]


ZERO_SHOT_METHODS = {"fusion": "Reciprocal-rank fusion of the pools' runs",
                     "encoder": "The bundled encoder's cosine similarity of topic and passage"}


class ZeroShotForm(ServiceErrorsMixin, forms.Form):
    """A zero-shot source (no human label needed) and the job that labels chosen pools with it."""

    method = forms.ChoiceField(choices=[(m, ZERO_SHOT_METHODS.get(m, m)) for m in ZERO_SHOT], initial="fusion",
                               widget=forms.RadioSelect,
                               help_text=f"The top {ZERO_SHOT_SHARE:.0%} of each topic's candidates by its score are "
                                         "labelled relevant.")
    pools = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    name = forms.CharField(required=False, max_length=200, help_text="Default METHOD-ID.")
    include_judged = forms.BooleanField(required=False, label="Label the candidates people judged too",
                                        help_text="To compare with them.")

    def __init__(self, *args, pools=(), **kwargs):
        kwargs.setdefault("auto_id", "zero-shot-%s")  # its inputs' ids: the other forms have pools and a name too
        super().__init__(*args, **kwargs)
        self.fields["pools"].choices = [(n, n) for n in pools]


class LlmLimitFields(forms.Form):
    """What every LLM job's form asks: how much now, the spend cap over every run of its source, and asking again
    where an answer was unreadable."""

    limit = forms.IntegerField(min_value=1, required=False, help_text="Ask at most this many items now (empty: all).")
    max_requests = forms.IntegerField(min_value=1, required=False, label="Spend cap: requests",
                                      help_text="Over every run of this source (empty: the site's LLM_JUDGE_MAX_REQUESTS).")
    max_tokens = forms.IntegerField(min_value=1, required=False, label="Spend cap: tokens",
                                    help_text="Over every run of this source (empty: the site's LLM_JUDGE_MAX_TOKENS).")
    retry_errors = forms.BooleanField(required=False, label="Ask again where the answer was unreadable")


class ImportMachineLabelsForm(ServiceErrorsMixin, forms.Form):
    """An outside judge's labels (UMBRELA's qrels, probabilities) as a machine label source of the campaign, as
    manage.py import_machine_labels takes them (assessments.importers.machine_labels)."""

    file = forms.FileField(help_text="TSV 'topic doc p', TREC qrels of grades 0-3 (as UMBRELA writes) or JSON lines "
                                     "{topic_id, doc_id, probs}; plain, .gz, .bz2 or .xz. Checked whole first.")
    name = forms.CharField(max_length=200, help_text="The source's name, e.g. umbrela-gpt4o.")
    format = forms.ChoiceField(choices=[("auto", "Tell from the file"), ("tsv", "TSV: topic doc p"),
                                        ("qrels", "TREC qrels of grades"), ("jsonl", "JSON lines with probs")],
                               initial="auto")
    model = forms.CharField(max_length=300, required=False, help_text="The judge's model, for the record.")
    prompt = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}), strip=False,
                             help_text="The prompt it was asked with, for the record.")
    replace = forms.BooleanField(required=False, label="Replace an imported source of this name")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "import-%s")  # its inputs' ids: the Machine page's other forms have names too
        super().__init__(*args, **kwargs)


class LlmJudgeForm(ServiceErrorsMixin, LlmLimitFields):
    """The LLM judge on chosen pools (or its query filter), within a spend cap."""

    pools = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=False)
    filter_queries = forms.BooleanField(required=False, label="Filter the queries instead",
                                        help_text="Keep the queries that describe a plot, drop those that only "
                                                  "express a feeling.")
    field_order = ["pools", "filter_queries"]

    def __init__(self, *args, pools=(), **kwargs):
        kwargs.setdefault("auto_id", "judge-%s")  # its inputs' ids: the Machine page's other forms have pools too
        super().__init__(*args, **kwargs)
        self.fields["pools"].choices = [(n, n) for n in pools]


class LlmNuggetsForm(ServiceErrorsMixin, LlmLimitFields):
    """The LLM's nugget work on a nuggets campaign (AutoNuggetizer): assignments or suggestions, within a spend cap
    (`limit` counts (answer, nugget) labels, or topics)."""

    step = forms.ChoiceField(choices=[("assign", "Assign: each answer's support of each nugget of its topic's bank"),
                                      ("suggest", "Suggest: each topic's atomic nuggets, vital or okay")],
                             widget=forms.RadioSelect, initial="assign")
    topics = forms.CharField(required=False, label="Only these topics",
                             help_text="Topic ids of this campaign, separated by spaces or commas (empty: all).")
    field_order = ["step", "topics"]

    def clean(self):
        data = super().clean()
        data["topics"] = _lines(data.get("topics"))  # the service's list, as the API and llm_nuggets --topics give it
        return data


class AuditForm(ServiceErrorsMixin, forms.Form):
    """A sample of the human labels a machine disagrees with goes to review (annotation.services.triage)."""

    machine_source = forms.TypedChoiceField(coerce=int, label="Machine label source")
    size = forms.IntegerField(min_value=1, max_value=1000, initial=20, help_text="Human labels to sample.")
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**31 - 1)

    def __init__(self, *args, sources=(), **kwargs):
        kwargs.setdefault("auto_id", "audit-%s")  # its inputs' ids, its own on the Machine page
        super().__init__(*args, **kwargs)
        self.fields["machine_source"].choices = [(s.pk, f"{s.name} (#{s.pk})") for s in sources]


class LlmPromptForm(ServiceErrorsMixin, forms.Form):
    """The campaign's own prompt for the LLM judge, its query filter, or the LLM's nugget steps (machine.PROMPTS)."""

    which = forms.ChoiceField(choices=[("llm_prompt", "relevance"), ("llm_filter_prompt", "query filter"),
                                       ("llm_nugget_assign_prompt", "nugget assignment"),
                                       ("llm_nugget_suggest_prompt", "nugget suggestion")],
                              widget=forms.HiddenInput)
    prompt = forms.CharField(widget=forms.Textarea(attrs={"rows": 14}), required=False, strip=False,
                             help_text="{query} and {passage} are replaced by the topic and the passage; the answer "
                                       "must end in the form the prompt asks for (##final score: N, or ##plot: yes|no).")
