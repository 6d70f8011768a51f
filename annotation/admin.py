"""Admin pages for campaigns and assignments."""

from django.contrib import admin

from annotation.models import Assignment, Campaign


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
