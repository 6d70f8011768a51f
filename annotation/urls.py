"""Assessor pages."""

from django.urls import path

from annotation.views import assessor as views, campaigns as campaign_views, studies as study_views

app_name = "annotation"

urlpatterns = [
    path("", views.home, name="home"),
    path("next/", views.next_assignment, name="next"),
    path("a/<str:token>/", views.assignment_page, name="outline"),
    path("a/<str:token>/save", views.save, name="save"),
    path("a/<str:token>/mark", views.mark, name="mark"),
    path("review/", campaign_views.review_queue, name="review_queue"),
    path("review/<int:pk>/", campaign_views.review_page, name="review"),
    path("campaigns/", campaign_views.campaign_list, name="campaigns"),
    path("campaigns/<slug:name>/adjudication/", campaign_views.adjudication_page, name="adjudication"),
    path("campaigns/<slug:name>/dashboard/", campaign_views.dashboard, name="dashboard"),
    path("studies/", study_views.study_index, name="study_index"),
    path("studies/<slug:name>/", study_views.study_results, name="study_results"),
]
