"""The test collection's data: topics, runs, pools, judgements and qrels."""

from assessments.models.answers import Answer, AnswerCitation, AnswerSentence
from assessments.models.judgements import (
    CANDIDATE_GRADES, Judgement, JudgementChange, Layer, Relevance, SpecialFacet, Transition,
)
from assessments.models.machine import MachineJob, MachineLabel, MachineLabelSource
from assessments.models.pools import CandidateSource, Pool, PoolCandidate
from assessments.models.qrels import Qrel, QrelSet
from assessments.models.runs import Run, RunEntry
from assessments.models.studies import StudyItem
from assessments.models.topics import Facet, Topic

__all__ = [
    "Answer",
    "AnswerCitation",
    "AnswerSentence",
    "CANDIDATE_GRADES",
    "CandidateSource",
    "Facet",
    "Judgement",
    "JudgementChange",
    "Layer",
    "MachineJob",
    "MachineLabel",
    "MachineLabelSource",
    "Pool",
    "PoolCandidate",
    "Qrel",
    "QrelSet",
    "Relevance",
    "Run",
    "RunEntry",
    "SpecialFacet",
    "StudyItem",
    "Topic",
    "Transition",
]
