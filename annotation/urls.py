"""Assessor pages."""

from django.urls import path

from annotation.views import assessor as views, campaigns as campaign_views, qualification as qualification_views
from annotation.views import studies as study_views
from annotation.views.console import browser, campaigns as console, data, jobs, machine, people, pools, results, work

app_name = "annotation"

urlpatterns = [
    path("", views.home, name="home"),
    path("next/", views.next_assignment, name="next"),
    path("a/<str:token>/", views.assignment_page, name="unit"),  # every kind's judging page (assessor.PAGES), by token
    path("a/<str:token>/save", views.save, name="save"),
    path("a/<str:token>/mark", views.mark, name="mark"),
    path("a/<str:token>/reopen", views.reopen, name="reopen"),
    path("qualification/<slug:name>/examples/", qualification_views.examples_page, name="qualification_examples"),
    path("review/", campaign_views.review_queue, name="review_queue"),
    path("review/<int:pk>/", campaign_views.review_page, name="review"),
    path("campaigns/", campaign_views.campaign_list, name="campaigns"),
    # The organiser's console (annotation/views/console/): a campaign from an empty site to qrels.
    path("campaigns/new/", console.campaign_new, name="campaign_new"),
    path("campaigns/<slug:name>/", console.campaign_home, name="campaign_home"),
    path("campaigns/<slug:name>/settings/", console.campaign_settings, name="console_campaign_settings"),
    path("campaigns/<slug:name>/judging-order/", console.judging_order, name="console_judging_order"),
    path("campaigns/<slug:name>/topic-stop/", console.topic_stop, name="console_topic_stop"),
    path("campaigns/<slug:name>/data/", data.campaign_data, name="console_data"),
    path("campaigns/<slug:name>/pools/", pools.pools_page, name="console_pools"),
    path("campaigns/<slug:name>/pools/<slug:pool>/status/", pools.pool_status, name="console_pool_status"),
    path("campaigns/<slug:name>/pools/<slug:pool>/", browser.pool_candidates, name="console_pool_candidates"),
    path("campaigns/<slug:name>/browse/", browser.browse, name="console_browse"),
    path("campaigns/<slug:name>/browse/<str:pk>/", browser.browse_item, name="console_browse_item"),
    path("campaigns/<slug:name>/work/", work.work_page, name="console_work"),
    path("campaigns/<slug:name>/machine/", machine.machine_page, name="console_machine"),
    path("campaigns/<slug:name>/results/", results.results_page, name="console_results"),
    path("campaigns/<slug:name>/results/<slug:what>/", results.download, name="console_download"),
    path("data/", data.site_data, name="console_site_data"),
    path("data/imports/<int:pk>/", data.import_page, name="console_import"),
    path("jobs/<slug:kind>/<int:pk>/", jobs.job_status, name="job_status"),
    path("data/documents/", data.document_preview, name="console_document"),
    path("people/", people.people_page, name="console_people"),
    path("welcome/<str:uidb64>/<str:token>/", people.welcome, name="welcome"),
    path("campaigns/<slug:name>/adjudication/", campaign_views.adjudication_page, name="adjudication"),
    path("campaigns/<slug:name>/dashboard/", campaign_views.dashboard, name="dashboard"),
    path("studies/", study_views.study_index, name="study_index"),
    path("studies/<slug:name>/", study_views.study_results, name="study_results"),
]
