"""Evaluation reports: per run, per topic and `all`, written as `run measure topic value` lines or as JSON."""

import json
from dataclasses import dataclass, field

from assessments.evaluation.measures import SUMMED, Measure, aggregate
from config.ids import parse_id


@dataclass
class RunScores:
    """One run's values: {topic: {Measure: value}} and the aggregate over its topics."""

    name: str
    per_topic: dict
    extra_all: dict = field(default_factory=dict)  # measures computed only as a whole (e.g. InPool@k)

    def all(self, measures) -> dict:
        return {**aggregate(self.per_topic, measures), **self.extra_all}


@dataclass
class Report:
    """Scores of several runs over the same measures, with notes on the conventions used."""

    measures: list
    runs: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def lines(self, per_topic=False):
        """trec_eval-like lines `run measure topic value`: per topic first (when asked), then `all`."""
        out = []
        for run in self.runs:
            if per_topic:
                for topic in sorted(run.per_topic, key=_topic_key):
                    for measure in self.measures:
                        if measure in run.per_topic[topic]:
                            out.append(f"{run.name}\t{measure}\t{topic}\t{_format(measure, run.per_topic[topic][measure])}")
            values = run.all(self.measures)
            for measure in [*self.measures, *run.extra_all]:
                if measure in values:
                    out.append(f"{run.name}\t{measure}\tall\t{_format(measure, values[measure])}")
        return out

    def as_json(self, per_topic=False) -> str:
        data = {"measures": [str(m) for m in self.measures], "notes": self.notes, "runs": {}}
        for run in self.runs:
            entry = {"all": {str(m): v for m, v in run.all(self.measures).items()}, "topics": len(run.per_topic)}
            if per_topic:
                entry["per_topic"] = {
                    topic: {str(m): v for m, v in values.items()}
                    for topic, values in sorted(run.per_topic.items(), key=lambda kv: _topic_key(kv[0]))
                }
            data["runs"][run.name] = entry
        return json.dumps(data, indent=1)


def _format(measure, value) -> str:
    name = measure.name if isinstance(measure, Measure) else str(measure)
    if name in SUMMED:
        return str(int(round(value)))
    return f"{value:.4f}"


def _topic_key(topic):
    number = parse_id(topic, minimum=0)
    return (0, number, "") if number is not None else (1, 0, str(topic))
