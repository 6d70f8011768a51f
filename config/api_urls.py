"""URLs of the REST API, mounted at /api/ by config/urls.py; views in annotation/api/."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny

from annotation.api.agreement import CampaignAgreement
from annotation.api.answers import CampaignAnswers
from annotation.api.campaign_settings import CampaignSettings
from annotation.api.campaigns import CampaignDetail, CampaignList, CampaignTopics, CampaignTopicsTrec
from annotation.api.evaluation import RunEvaluation
from annotation.api.nuggets import CampaignNuggetScores
from annotation.api.machine import (ImportLabels, MachineJobDetail, MachineOverview, StartJudging, StartLabelling,
                                    StartNuggets, StartTraining, StartZeroShot)
from annotation.api.pools import PoolCandidates, PoolDetail, PoolList
from annotation.api.results import CarAssessments, Qrels
from annotation.api.root import ApiDocs, ApiRoot, Me
from annotation.api.runs import RunDetail, RunList

# Path parameters are matched as any text, so that a malformed id or name reaches the view and gets the API's
# JSON 404 rather than Django's HTML page; the schema gives their real form (an integer id, a slug name).
endpoints = [
    path("me/", Me.as_view(), name="api-me"),
    path("campaigns/", CampaignList.as_view(), name="api-campaigns"),
    path("campaigns/<str:name>/", CampaignDetail.as_view(), name="api-campaign"),
    path("campaigns/<str:name>/settings/", CampaignSettings.as_view(), name="api-campaign-settings"),
    path("campaigns/<str:name>/topics/", CampaignTopics.as_view(), name="api-campaign-topics"),
    path("campaigns/<str:name>/topics/trec/", CampaignTopicsTrec.as_view(), name="api-campaign-topics-trec"),
    path("campaigns/<str:name>/answers/", CampaignAnswers.as_view(), name="api-campaign-answers"),
    path("campaigns/<str:name>/nugget-scores/", CampaignNuggetScores.as_view(), name="api-campaign-nugget-scores"),
    path("campaigns/<str:name>/agreement/", CampaignAgreement.as_view(), name="api-campaign-agreement"),
    path("campaigns/<str:name>/machine/", MachineOverview.as_view(), name="api-campaign-machine"),
    path("campaigns/<str:name>/machine/jobs/<str:id>/", MachineJobDetail.as_view(), name="api-campaign-machine-job"),
    path("campaigns/<str:name>/machine/train/", StartTraining.as_view(), name="api-campaign-machine-train"),
    path("campaigns/<str:name>/machine/label/", StartLabelling.as_view(), name="api-campaign-machine-label"),
    path("campaigns/<str:name>/machine/judge/", StartJudging.as_view(), name="api-campaign-machine-judge"),
    path("campaigns/<str:name>/machine/zero-shot/", StartZeroShot.as_view(), name="api-campaign-machine-zero-shot"),
    path("campaigns/<str:name>/machine/nuggets/", StartNuggets.as_view(), name="api-campaign-machine-nuggets"),
    path("campaigns/<str:name>/machine/import/", ImportLabels.as_view(), name="api-campaign-machine-import"),
    path("runs/", RunList.as_view(), name="api-runs"),
    path("runs/<str:pk>/", RunDetail.as_view(), name="api-run"),
    path("runs/<str:pk>/evaluation/", RunEvaluation.as_view(), name="api-run-evaluation"),
    path("pools/", PoolList.as_view(), name="api-pools"),
    path("pools/<str:name>/", PoolDetail.as_view(), name="api-pool"),
    path("pools/<str:name>/candidates/", PoolCandidates.as_view(), name="api-pool-candidates"),
    path("qrels/", Qrels.as_view(), name="api-qrels"),
    path("assessments/car-y3/", CarAssessments.as_view(), name="api-car-assessments"),
]

# The schema describes exactly the endpoints above, with their /api/ prefix.
schema_patterns = [path("api/", include(endpoints))]

urlpatterns = [
    path("", ApiRoot.as_view(), name="api-root"),
    path("schema/", SpectacularAPIView.as_view(
        patterns=schema_patterns, permission_classes=[AllowAny], authentication_classes=[]
    ), name="api-schema"),
    path("docs/", ApiDocs.as_view(patterns=schema_patterns), name="api-docs"),
    *endpoints,
]
