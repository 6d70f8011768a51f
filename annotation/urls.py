"""Assessor pages."""

from django.urls import path

from annotation import views

app_name = "annotation"

urlpatterns = [
    path("", views.home, name="home"),
    path("next/", views.next_assignment, name="next"),
    path("a/<str:token>/", views.outline, name="outline"),
    path("a/<str:token>/save", views.save, name="save"),
    path("a/<str:token>/mark", views.mark, name="mark"),
]
