"""Admin pages for campaigns and assignments."""

from django.contrib import admin

from annotation.models import ApiToken, Assignment, Campaign, Track


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    """Campaigns with assignment counts."""

    list_display = ["name", "title", "task", "assignments_count", "created_at"]
    list_filter = ["task"]
    search_fields = ["name", "title"]
    filter_horizontal = ["pools"]

    def get_queryset(self, request):
        from django.db.models import Count

        return super().get_queryset(request).annotate(assignment_count=Count("assignments"))

    @admin.display(ordering="assignment_count", description="assignments")
    def assignments_count(self, obj):
        return obj.assignment_count


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    """Who judges what; filter by assessor, status, campaign."""

    list_display = ["assessor", "topic", "run", "pool", "campaign", "status", "position", "started_at", "finished_at"]
    list_filter = ["status", "campaign", "assessor"]
    search_fields = ["assessor__username", "topic__external_id", "run__name"]
    list_select_related = ["assessor", "topic", "run", "pool", "campaign"]
    raw_id_fields = ["topic"]
    readonly_fields = ["token", "seed", "created_at"]


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
