"""URL configuration."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

admin.site.site_header = "Pooljudge"
admin.site.site_title = "Pooljudge"
admin.site.index_title = "Test collections: corpora, topics, runs, pools, judgements"

urlpatterns = [
    path("admin/", admin.site.urls),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True, next_page="annotation:home"),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="login"), name="logout"),
    path("api/", include("config.api_urls")),
    path("", include("annotation.urls")),
]
