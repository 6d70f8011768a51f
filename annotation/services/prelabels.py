"""Pre-labels: whether a judging page shows an assessor a machine label, and the blind calibration share.

Assessors see no machine label unless the campaign turns it on. Its settings:

- ``show_machine_labels``: true to show them (default false: nothing of a machine reaches the page or its JSON);
- ``machine_source``: the id of the MachineLabelSource whose labels are shown (needed when on);
- ``blind_share``: the share of items (0-1, default 0.2) that never show one, the blind calibration set that
  measures the anchoring effect. An item is blind by a hash of (campaign, topic, passage): the same items for
  every assessor, the same on every visit, and no assessor can tell which.

When they are on, every change about a passage records whether its page showed a machine label for it
(JudgementChange.machine_shown: the server decides, from the same rule the page was drawn with); when off,
nothing is recorded (None).
"""

import hashlib
from dataclasses import dataclass

from assessments.models import MachineLabel, MachineLabelSource

DEFAULT_BLIND_SHARE = 0.2


class PrelabelsInvalid(ValueError):
    """A pre-label setting that cannot be used; the message names it."""


@dataclass(frozen=True)
class Prelabels:
    """A campaign's pre-label settings, checked."""

    on: bool
    campaign_id: int | None = None
    source_id: int | None = None
    blind_share: float = DEFAULT_BLIND_SHARE
    grades: tuple = ()

    def blind(self, topic_id, passage_id) -> bool:
        """Whether this item is in the blind calibration share (never shows a machine label)."""
        digest = hashlib.sha256(f"blind:{self.campaign_id}:{topic_id}:{passage_id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.blind_share

    def shown(self, topic_id, passage_ids) -> dict:
        """{passage id: {"grade", "score", "text"}} of the machine labels the page shows for these passages."""
        if not self.on:
            return {}
        visible = [pid for pid in passage_ids if not self.blind(topic_id, pid)]
        rows = MachineLabel.objects.filter(source_id=self.source_id, topic_id=topic_id, passage_id__in=visible,
                                           grade__isnull=False).values_list("passage_id", "grade", "score")
        return {pid: {"grade": grade, "score": None if score is None else round(score, 2), "text": self.describe(grade)}
                for pid, grade, score in rows}

    def was_shown(self, topic_id, passage) -> bool | None:
        """What a change about `passage` records: None when pre-labels are off, else whether its page showed one."""
        if not self.on or passage is None:
            return None
        return bool(self.shown(topic_id, [passage.pk]))

    def describe(self, grade) -> str:
        if sorted(self.grades) == [0, 1]:
            return "likely relevant" if grade else "likely not relevant"
        top = max(self.grades) if self.grades else 3
        return f"grade {grade} of {top}"


OFF = Prelabels(on=False)


def prelabels(campaign) -> Prelabels:
    """The campaign's pre-label settings; OFF unless it turns them on. PrelabelsInvalid names a bad setting."""
    settings = campaign.settings if campaign is not None and isinstance(campaign.settings, dict) else {}
    on = settings.get("show_machine_labels", False)
    if not isinstance(on, bool):
        raise PrelabelsInvalid("show_machine_labels: expected true or false")
    if not on:
        return OFF
    share = settings.get("blind_share", DEFAULT_BLIND_SHARE)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
        raise PrelabelsInvalid("blind_share: expected a share from 0 to 1")
    source_id = settings.get("machine_source")
    if isinstance(source_id, bool) or not isinstance(source_id, int):
        raise PrelabelsInvalid("machine_source: expected the id of a machine label source")
    grades = (MachineLabelSource.objects.usable_by(campaign.pk).filter(pk=source_id).values_list("grades", flat=True)
              .first())
    if grades is None:  # checked where it is read too: a value stored before the check (or in the admin) is not used
        raise PrelabelsInvalid(f"machine_source: there is no machine label source {source_id} this campaign may use")
    return Prelabels(on=True, campaign_id=campaign.pk, source_id=source_id, blind_share=float(share),
                     grades=tuple(grades or ()))


def of_assignment(assignment) -> Prelabels:
    """The pre-labels of an assignment's campaign (OFF outside a campaign)."""
    return prelabels(assignment.campaign if assignment.campaign_id else None)
