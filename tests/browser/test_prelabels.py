"""Pre-labels in Chromium: with them off, no machine label reaches the assessor's page or its JSON; with them on,
the blind calibration share never shows one, and each change records whether its item showed one."""

import json

import pytest

from annotation.services import plot, prelabels
from assessments.models import JudgementChange, MachineLabel, MachineLabelSource
from tests.annotation import plot_setup as ps
from tests.browser.test_plot_labelling import sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def assignment(tmp_path):
    """Six candidates of the sample query; an annotator labelled every one (alternately relevant or not)."""
    assignment = ps.labelling(tmp_path, size=6, lines=ps.EXCERPT, context_sentences=1)
    source = MachineLabelSource.objects.create(name="annotator", kind="classifier", collection=assignment.topic.collection,
                                               model="minilm", grades=[0, 1], status="ready")
    for n, candidate in enumerate(plot.candidates(assignment)):
        MachineLabel.objects.create(source=source, topic=assignment.topic, passage=candidate.passage, grade=n % 2,
                                    score=0.3 + n / 10)
    assignment.source = source
    return assignment


def grade_all(page, count):
    """Grade every candidate with the keyboard (2, then the next with j); returns what each page section showed."""
    seen = []
    for n in range(1, count + 1):
        hint = page.locator(f"#candidate-{n} [data-role=machine-label]")
        seen.append(hint.count() == 1 and hint.is_visible())
        page.keyboard.press("2")
        if n < count:
            page.keyboard.press("j")
    page.wait_for_selector('#savestate[data-state="saved"]')
    return seen


def open_page(new_page, assignment):
    page = new_page()
    responses = []
    page.on("response", lambda r: responses.append(r) if "/save" in r.url else None)
    sign_in(page)
    page.goto(f"/a/{assignment.token}/")
    page.wait_for_selector("body[data-ready=plot]")
    return page, responses


def test_with_pre_labels_off_no_machine_label_reaches_the_page_or_its_json(new_page, assignment):
    page, responses = open_page(new_page, assignment)

    html = page.content()
    state = page.evaluate("JSON.parse(document.getElementById('plot-data').textContent)")
    shown = grade_all(page, 6)

    assert "Machine suggestion" not in html and "likely relevant" not in html and "machine" not in json.dumps(state)
    assert shown == [False] * 6
    assert responses and all("machine" not in r.text() for r in responses)
    assert list(JudgementChange.objects.values_list("machine_shown", flat=True)) == [None] * 6


def test_with_pre_labels_on_the_blind_share_never_shows_one_and_each_change_records_it(new_page, assignment):
    campaign = assignment.campaign
    order = [c.passage_id for c in plot.candidates(assignment)]
    # The blind share is a hash of campaign, topic and passage ids, which differ from run to run: take the share
    # nearest one half that puts both kinds on this page (all six in one twentieth of [0, 1] is ~1e-6 likely).
    for share in sorted((n / 20 for n in range(1, 20)), key=lambda s: abs(s - 0.5)):
        campaign.settings = {**campaign.settings, "show_machine_labels": True,
                             "machine_source": assignment.source.pk, "blind_share": share}
        rule = prelabels.prelabels(campaign)
        blind = [rule.blind(assignment.topic_id, pid) for pid in order]
        if 0 < sum(blind) < 6:
            break
    assert 0 < sum(blind) < 6, "no share puts both kinds on this page"
    campaign.save()

    page, _ = open_page(new_page, assignment)
    state = page.evaluate("JSON.parse(document.getElementById('plot-data').textContent)")
    shown = grade_all(page, 6)

    assert shown == [not b for b in blind]
    assert sorted(map(int, state["machine"])) == sorted(pid for pid, b in zip(order, blind) if not b)
    for n, (pid, b) in enumerate(zip(order, blind), start=1):
        if not b:
            text = page.text_content(f"#candidate-{n} [data-role=machine-label]")
            grade = MachineLabel.objects.get(passage_id=pid).grade
            assert ("likely relevant" if grade else "likely not relevant") in text
    recorded = dict(JudgementChange.objects.values_list("judgement__passage_id", "machine_shown"))
    assert recorded == {pid: not b for pid, b in zip(order, blind)}
