"""The API's front pages: the root (links), the documentation (every operation, from the schema), and /me."""

from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.permissions import request_role, request_token, scope_campaign
from annotation.api.serializers import MeSerializer


class ApiRoot(APIView):
    """The Pooljudge REST API. Send `Authorization: Token <key>`; `manage.py issue_token` prints a key.

    Open to everyone (it holds no data).
    """

    permission_classes = [AllowAny]
    authentication_classes = []

    @extend_schema(exclude=True)
    def get(self, request):
        def link(name, **kwargs):
            return request.build_absolute_uri(reverse(name, kwargs=kwargs))

        return Response({
            "documentation": link("api-docs"),
            "schema": link("api-schema"),
            "me": link("api-me"),
            "campaigns": link("api-campaigns"),
            "runs": link("api-runs"),
            "pools": link("api-pools"),
            "qrels": link("api-qrels"),
            "car_y3_assessments": link("api-car-assessments"),
        })


class ApiDocs(APIView):
    """Every operation of the API with what it does and who may call it, from the OpenAPI schema.

    The machine-readable schema is at /api/schema/. Open to everyone (it holds no data).
    """

    permission_classes = [AllowAny]
    authentication_classes = []
    patterns = None  # set by config/api_urls.py: the API's URL patterns

    @extend_schema(exclude=True)
    def get(self, request):
        schema = SchemaGenerator(patterns=self.patterns).get_schema(request=None, public=True)
        operations = [
            {
                "method": method.upper(),
                "path": path,
                "summary": operation.get("summary", ""),
                "description": operation.get("description", ""),
                "parameters": [p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"],
                "responses": sorted(operation.get("responses", {})),
            }
            for path, methods in schema["paths"].items()
            for method, operation in methods.items()
        ]
        info = schema["info"]
        return Response({
            "title": info["title"],
            "description": info.get("description", ""),
            "schema": request.build_absolute_uri(reverse("api-schema")),
            "operations": operations,
        })


class Me(APIView):
    """Who the API takes you for: user, role (participant, organiser or none) and the token's campaign.

    Who: anyone signed in (an assessor sees role null: the API has nothing for assessors).
    """

    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Who am I", responses=MeSerializer)
    def get(self, request):
        token, scope = request_token(request), scope_campaign(request)
        return Response(MeSerializer({
            "username": request.user.get_username(),
            "role": request_role(request),
            "campaign": scope.name if scope else None,
            "token": token.prefix if token else None,
        }).data)
