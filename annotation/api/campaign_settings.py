"""Changing a campaign's settings over the API: the console's rule (annotation.services.campaign_settings), effects
said first, applied only with the digest of those effects."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.common import visible_campaigns
from annotation.api.parsers import JSONParser
from annotation.api.permissions import IsOrganiser
from annotation.services.campaign_settings import FIELDS, change_settings
from annotation.services.errors import ServiceError


class SettingsChangeRequestSerializer(serializers.Serializer):
    settings = serializers.DictField(help_text=f"The settings to change, by name: {', '.join(FIELDS)}.")
    assessors = serializers.ListField(child=serializers.CharField(max_length=150), required=False, max_length=1000,
                                      help_text="Usernames overlap up may give work (default: the campaign's assessors).")
    confirm = serializers.CharField(required=False, allow_blank=True, max_length=64,
                                    help_text="The `confirm` of a previous answer: apply exactly those effects.")


class SettingsChangeSerializer(serializers.Serializer):
    applied = serializers.BooleanField()
    changed = serializers.ListField(child=serializers.CharField())
    effects = serializers.ListField(child=serializers.CharField(), help_text="What the change does, one sentence each.")
    confirm = serializers.CharField(help_text="Send it back with the same settings to apply them.")


class CampaignSettings(APIView):
    """Change a campaign's settings: without `confirm`, nothing changes and the answer lists what the change would do
    to the work already done and gives `confirm`; sent again with it, the change is applied if its effects are still
    those (else nothing is applied and the new effects come back). A scale cannot lose a grade in use; overlap up
    assigns, down takes back unstarted units only. A refusal is a 400 naming the field.

    Who: organisers; a campaign token, its campaign only (another campaign is a 404).
    """

    permission_classes = [IsOrganiser]
    parser_classes = [JSONParser]

    @extend_schema(summary="Change a campaign's settings", request=SettingsChangeRequestSerializer,
                   responses={200: SettingsChangeSerializer})
    def post(self, request, name):
        campaign = get_object_or_404(visible_campaigns(request), name=name)
        form = SettingsChangeRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        # Only the settings a campaign declares, named in the 400 as the service names its refusals: a key such as
        # "confirm", "assessors", "seed" or "campaign" was passed on as a keyword of change_settings itself (a 500
        # for two values of one argument, or silently taken as the argument).
        unknown = sorted(str(key) for key in data["settings"] if key not in FIELDS)
        if unknown:
            return Response({"detail": f"{unknown[0]!r} is not a setting that can be changed here (settings: "
                             f"{', '.join(FIELDS)})", "field": unknown[0]}, status=status.HTTP_400_BAD_REQUEST)
        try:
            change = change_settings(campaign, confirm=data.get("confirm") or None, assessors=data.get("assessors"),
                                     **data["settings"])
        except ServiceError as exc:
            return Response({"detail": exc.message, "field": exc.field}, status=status.HTTP_400_BAD_REQUEST)
        return Response(SettingsChangeSerializer({"applied": change.applied, "changed": change.changed,
                                                  "effects": change.effects, "confirm": change.digest}).data)
