"""Pair rating (a human study): rate each pair of passages of the pool's topic from 1 to 10."""

from annotation.units.pooled import study_kind
from annotation.units.registry import register
from assessments.models import StudyItem

UNIT = register(study_kind(StudyItem.Kind.PAIR.value, title="Pair rating", template="annotation/pair.html"))
