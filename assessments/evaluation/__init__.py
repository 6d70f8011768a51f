"""Run evaluation: trec_eval's measures in ir_measures' notation, N-RODCG for plot topics, reports for people and scripts."""

from assessments.evaluation.measures import (
    Measure, MeasureError, aggregate, evaluate, nrodcg, parse_measure, rod_gain, topic_value, trec_order,
)

__all__ = [
    "Measure", "MeasureError", "aggregate", "evaluate", "nrodcg", "parse_measure", "rod_gain", "topic_value",
    "trec_order",
]
