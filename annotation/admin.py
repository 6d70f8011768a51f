"""Admin pages for campaigns and assignments."""

from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html

from annotation.services.audit import delete_campaign
from annotation.models import (
    ApiToken, Assignment, Campaign, CampaignTopic, DataImport, DataImportFile, QualificationResult, Review, ReviewItem,
    Track,
)
from annotation.data_imports import DismissedWork
from assessments.exporters.common import ExportFailed


class CampaignTopicInline(admin.TabularInline):
    """Per-topic overlap and qualification topics."""

    model = CampaignTopic
    extra = 0
    raw_id_fields = ["topic"]


class CampaignAdminForm(forms.ModelForm):
    """A campaign's fields; a change of its settings is checked by annotation.services.campaign_settings (a scale
    losing a grade in use, overlap beyond the assessors: the error beside the field)."""

    class Meta:
        model = Campaign
        fields = "__all__"

    def clean(self):
        data = super().clean()
        if self.instance.pk and not self.errors:
            from annotation.services.campaign_settings import admin_values, change_settings
            from annotation.services.errors import ServiceError

            probe = Campaign(pk=self.instance.pk, **{k: v for k, v in data.items() if k in _CAMPAIGN_COLUMNS})
            try:
                self.settings_change = change_settings(self.instance, **admin_values(probe, self.changed_data))
            except ServiceError as exc:
                self.add_error(exc.field if exc.field in self.fields else None, exc.message if exc.field in self.fields
                               else str(exc))
        return data


_CAMPAIGN_COLUMNS = {"title", "guidelines", "overlap", "show_run_names", "review_sample_size", "review_threshold",
                     "qualification_threshold", "qualification_attempts", "settings", "task", "name"}


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    """Campaigns with assignment counts; changed settings go through annotation.services.campaign_settings."""

    form = CampaignAdminForm

    list_display = ["name", "title", "task", "overlap", "assignments_count", "dashboard", "created_at"]
    list_filter = ["task"]
    search_fields = ["name", "title"]
    filter_horizontal = ["pools", "reviewers"]
    inlines = [CampaignTopicInline]

    def get_queryset(self, request):
        from django.db.models import Count

        return super().get_queryset(request).annotate(assignment_count=Count("assignments"))

    @admin.display(ordering="assignment_count", description="assignments")
    def assignments_count(self, obj):
        return obj.assignment_count

    @admin.display(description="dashboard")
    def dashboard(self, obj):
        return format_html('<a href="{}">dashboard</a> · <a href="{}">adjudicate</a>',
                           reverse("annotation:dashboard", args=[obj.name]),
                           reverse("annotation:adjudication", args=[obj.name]))

    def save_model(self, request, obj, form, change):
        """A changed campaign's settings are applied by the settings service (overlap up assigns, down takes back
        unstarted units, raised attempts give retakes), with the effects its check listed; then the other fields."""
        preview = getattr(form, "settings_change", None)
        if change and preview is not None and preview.changed:
            from annotation.services.campaign_settings import admin_values, change_settings

            done = change_settings(Campaign.objects.get(pk=obj.pk), confirm=preview.digest,
                                   **admin_values(obj, form.changed_data))
            if done.applied:
                self.message_user(request, "Settings changed: " + "; ".join(done.effects) + ".")
            else:
                self.message_user(request, "The work moved while you edited: the settings were not changed. "
                                  "Now: " + "; ".join(done.effects) + ".", messages.WARNING)
                return
        super().save_model(request, obj, form, change)

    # Deleting (after the admin's confirmation page) first writes the campaign's export under EXPORT_DIR.
    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except ExportFailed as exc:
            self.message_user(request, f"Not deleted: {exc}", messages.ERROR)
            return redirect("admin:annotation_campaign_change", object_id)

    def delete_model(self, request, obj):
        path = delete_campaign(obj)
        self.message_user(request, f"The export of campaign “{obj.name}” was written to {path} before deleting it.")

    def delete_queryset(self, request, queryset):
        for campaign in queryset:
            self.delete_model(request, campaign)


@admin.register(CampaignTopic)
class CampaignTopicAdmin(admin.ModelAdmin):
    """Topics with their own overlap, and qualification topics."""

    list_display = ["campaign", "topic", "overlap", "qualification"]
    list_filter = ["campaign", "qualification"]
    search_fields = ["campaign__name", "topic__external_id", "topic__title"]
    list_select_related = ["campaign", "topic"]
    raw_id_fields = ["topic"]


@admin.register(QualificationResult)
class QualificationResultAdmin(admin.ModelAdmin):
    """Scored qualification attempts (a retake: raise the campaign's attempts)."""

    list_display = ["assessor", "campaign", "attempt", "correct", "items", "score", "passed", "created_at"]
    list_filter = ["campaign", "passed"]
    search_fields = ["assessor__username", "campaign__name"]
    list_select_related = ["assessor", "campaign"]
    readonly_fields = ["campaign", "assessor", "attempt", "items", "correct", "score", "threshold", "passed", "created_at"]


class ReviewItemInline(admin.TabularInline):
    """The sampled items of a review."""

    model = ReviewItem
    extra = 0
    raw_id_fields = ["passage"]
    readonly_fields = ["position", "passage", "labels"]


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    """Reviews of finished batches: who reviews, pass rate, outcome."""

    list_display = ["assignment", "round", "reviewer", "status", "pass_rate", "created_at", "finished_at"]
    list_filter = ["status", "assignment__campaign", "reviewer"]
    search_fields = ["assignment__assessor__username", "assignment__topic__external_id", "reviewer__username"]
    list_select_related = ["assignment__assessor", "assignment__topic", "assignment__run", "reviewer"]
    raw_id_fields = ["assignment"]
    readonly_fields = ["threshold", "pass_rate", "created_at", "finished_at"]
    inlines = [ReviewItemInline]


@admin.register(ReviewItem)
class ReviewItemAdmin(admin.ModelAdmin):
    """Reviewed items with the reviewer's verdict and remark."""

    list_display = ["review", "position", "passage", "correct", "remark"]
    list_filter = ["correct"]
    search_fields = ["remark", "passage__external_id", "review__assignment__assessor__username"]
    list_select_related = ["review__assignment__assessor", "review__assignment__topic", "review__assignment__run",
                           "passage"]
    raw_id_fields = ["review", "passage"]


class AssignmentForm(forms.ModelForm):
    """An assignment checked as annotation.services.assignment.check_unit checks it: a real unit, no duplicate."""

    class Meta:
        model = Assignment
        fields = ["campaign", "assessor", "topic", "run", "pool", "qualification", "position", "status"]

    def clean(self):
        data = super().clean()
        from annotation.services.assignment import check_unit
        from annotation.services.errors import ServiceError

        if self.errors:
            return data
        try:
            self.instance.kind = check_unit(
                campaign=data.get("campaign"), assessor=data.get("assessor"), topic=data.get("topic"),
                run=data.get("run"), pool=data.get("pool"), instance=self.instance,
            )
        except ServiceError as exc:
            raise forms.ValidationError({exc.field: exc.message} if exc.field in self.fields else exc.message) from None
        return data


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    """Who judges what; filter by assessor, status, campaign."""

    form = AssignmentForm
    list_display = ["assessor", "topic", "kind", "run", "pool", "campaign", "status", "qualification", "position",
                    "started_at", "finished_at"]
    list_filter = ["kind", "status", "qualification", "campaign", "assessor"]
    search_fields = ["assessor__username", "topic__external_id", "run__name"]
    list_select_related = ["assessor", "topic", "run", "pool", "campaign"]
    raw_id_fields = ["topic"]
    readonly_fields = ["kind", "token", "seed", "incomplete_reason", "created_at"]


@admin.register(Track)
class TrackAdmin(admin.ModelAdmin):
    """What each campaign takes runs for (create_campaign makes them)."""

    list_display = ["campaign", "collection", "topic_total", "max_runs", "max_per_topic", "created_at"]
    search_fields = ["campaign__name", "collection__name"]
    list_select_related = ["campaign", "collection"]
    raw_id_fields = ["topics"]

    def get_queryset(self, request):
        from django.db.models import Count

        return super().get_queryset(request).annotate(topic_count=Count("topics"))

    @admin.display(ordering="topic_count", description="topics")
    def topic_total(self, obj):
        return obj.topic_count


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """REST API tokens: issued with `manage.py issue_token` (the key is shown once), revoked here or with revoke_token."""

    list_display = ["prefix", "user", "role", "campaign", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["role", "campaign"]
    search_fields = ["prefix", "user__username"]
    list_select_related = ["user", "campaign"]
    readonly_fields = ["user", "role", "campaign", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False  # a key must be shown to its owner once: issue_token does that

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        self.message_user(request, f"{queryset.revoke()} tokens revoked.")


class DataImportFileInline(admin.TabularInline):
    model = DataImportFile
    fields = ["position", "name", "size"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(DataImport)
class DataImportAdmin(admin.ModelAdmin):
    """Files uploaded in the console (/data/): what was imported, or every problem; started there, never here."""

    list_display = ["id", "kind", "status", "campaign", "collection", "created_by", "created_at", "finished_at"]
    list_filter = ["kind", "status"]
    search_fields = ["collection", "summary", "campaign__name"]
    list_select_related = ["campaign", "created_by"]
    readonly_fields = ["kind", "campaign", "collection", "options", "file_names", "status", "summary", "problems",
                       "problem_total", "created_by", "created_at", "started_at", "finished_at"]
    inlines = [DataImportFileInline]

    def has_add_permission(self, request):
        return False  # uploads start on the console's Data pages


@admin.register(DismissedWork)
class DismissedWorkAdmin(admin.ModelAdmin):
    """Failed background work an organiser dismissed from /campaigns/ (who and when): read-only."""

    list_display = ["kind", "object_id", "dismissed_by", "dismissed_at"]
    list_filter = ["kind"]
    search_fields = ["dismissed_by__username"]
    readonly_fields = ["kind", "object_id", "dismissed_by", "dismissed_at"]

    def has_add_permission(self, request):
        return False


@admin.register(DataImportFile)
class DataImportFileAdmin(admin.ModelAdmin):
    """One uploaded file of a data import (its content is emptied once the import has ended)."""

    list_display = ["name", "data_import", "position", "size"]
    search_fields = ["name"]
    fields = ["data_import", "position", "name", "size"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False
