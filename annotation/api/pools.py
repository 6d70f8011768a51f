"""Pools (organisers): create from a campaign's runs, see how the build goes, read the candidates."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from annotation.api.common import detail, visible_pools
from annotation.api.parsers import JSONParser
from annotation.api.permissions import IsOrganiser, scope_campaign
from annotation.api.serializers import CandidateSerializer, DetailSerializer, PoolCreateSerializer, PoolSerializer
from annotation.services.campaigns import CampaignError, create_pool
from assessments.models import PoolCandidate


class PoolList(generics.ListCreateAPIView):
    """Pools, newest first; create a pool of a campaign's runs (built in the background).

    Who: organisers.
    """

    permission_classes = [IsOrganiser]
    parser_classes = [JSONParser]
    ordering = ("-id",)

    def get_serializer_class(self):
        return PoolCreateSerializer if self.request.method == "POST" else PoolSerializer

    def get_queryset(self):
        return visible_pools(self.request)

    @extend_schema(summary="List pools")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Create a pool",
        description=(
            "A pool of the given runs (ids, of the campaign's collection) over the campaign's topics, or some of "
            "them. The build is queued: `status` goes from pending to ready (or failed, with `error`)."
        ),
        request=PoolCreateSerializer,
        responses={201: PoolSerializer},
    )
    def post(self, request, *args, **kwargs):
        form = self.get_serializer(data=request.data)
        form.is_valid(raise_exception=True)
        values = dict(form.validated_data)
        scope = scope_campaign(request)
        if scope is not None and scope.pk != values["campaign"].pk:
            raise PermissionDenied(f"This token is for campaign {scope.name!r} only.")
        try:
            pool = create_pool(created_by=request.user, **values)
        except CampaignError as exc:
            return detail(status.HTTP_400_BAD_REQUEST, f"{exc}.")
        return Response(PoolSerializer(visible_pools(request).get(pk=pool.pk)).data, status=status.HTTP_201_CREATED)


class PoolDetail(generics.RetrieveAPIView):
    """One pool: its runs, counts and build status.

    Who: organisers.
    """

    permission_classes = [IsOrganiser]
    serializer_class = PoolSerializer
    lookup_field = "name"

    def get_queryset(self):
        return visible_pools(self.request)

    @extend_schema(summary="Get a pool")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class PoolCandidates(generics.ListAPIView):
    """A pool's candidates by topic (in the order the topics were stored) and rank, each with the runs that brought
    it and at what rank.

    Who: organisers.
    """

    permission_classes = [IsOrganiser]
    serializer_class = CandidateSerializer
    ordering = ("topic_id", "rank")  # unique within the pool: the index of unique_pool_candidate_rank serves it
    queryset = PoolCandidate.objects.none()  # for the schema; get_queryset gives the pool's candidates

    def get_queryset(self):
        pool = get_object_or_404(visible_pools(self.request), name=self.kwargs["name"])
        candidates = (
            PoolCandidate.objects.filter(pool=pool)
            .select_related("topic", "passage")
            .prefetch_related("sources__run")
        )
        topic = self.request.query_params.get("topic")
        return candidates.filter(topic__external_id=topic) if topic else candidates

    @extend_schema(
        summary="List a pool's candidates",
        parameters=[OpenApiParameter("topic", str, description="Only this topic's candidates (its id).")],
        responses={200: CandidateSerializer(many=True), 404: OpenApiResponse(DetailSerializer)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)
