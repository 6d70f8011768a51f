"""Forced choice (a human study): for each item of the pool's topic, pick one of its candidates."""

from annotation.units.pooled import study_kind
from annotation.units.registry import register
from assessments.models import StudyItem

UNIT = register(study_kind(StudyItem.Kind.CHOICE.value, title="Forced choice", template="annotation/choice.html"))
