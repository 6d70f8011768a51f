"""URL configuration."""

from django.contrib import admin
from django.urls import path
from django.views.generic import RedirectView

admin.site.site_header = "Pooljudge"
admin.site.site_title = "Pooljudge"
admin.site.index_title = "Test collections: corpora, topics, runs, pools, judgements"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
]
