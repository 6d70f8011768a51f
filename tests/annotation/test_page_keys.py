"""One key dispatch for the judging pages (issue 40 item 3): the shared module (autosave.js, on every judging page)
installs the one keydown listener; each page declares its keys with PooljudgeAutosave.keys({...})."""

import re
from pathlib import Path

import pytest

from annotation.views.assessor import PAGES

STATIC = Path(__file__).resolve().parents[2] / "annotation" / "static" / "annotation"
SCRIPTS = sorted({Path(script).name for _, script, _ in PAGES.values()})
KEYDOWN = re.compile(r"""addEventListener\(\s*["']keydown["']""")


def own_listeners(name):
    return len(KEYDOWN.findall((STATIC / name).read_text(encoding="utf-8")))


def test_the_judging_pages_are_the_six_scripts():
    assert SCRIPTS == ["adhoc.js", "nugget_creation.js", "nugget_support.js", "outline.js", "plot.js", "study.js"]


def test_no_judging_page_script_listens_for_keys_itself():
    with_own = [name for name in SCRIPTS if own_listeners(name)]
    assert len(with_own) <= 2, with_own  # the bar
    assert with_own == []  # and none does: the shared dispatch has every page's keys


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_judging_page_declares_its_keys_to_the_shared_dispatch(name):
    code = (STATIC / name).read_text(encoding="utf-8")
    assert re.search(r"\bAS\.keys\(\{", code), name


def test_the_shared_module_installs_the_one_listener_once():
    code = (STATIC / "autosave.js").read_text(encoding="utf-8")
    # one document listener for the page's keys (the other keydown listener keeps keys typed in a question there)
    assert len(re.findall(r"""document\.addEventListener\(\s*["']keydown["']""", code)) == 1
    assert re.search(r"""if \(!keyPage\) document\.addEventListener\("keydown", onKey\)""", code)


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_every_judging_page_loads_the_shared_module_before_its_own_script(kind):
    from tests.annotation.test_label_stays import chain

    template, script, _ = PAGES[kind]
    tags = re.findall(r"""<script src="{%\s*static\s+'?([\w./]+)'?\s*%}""", "\n".join(chain(template)))
    own = [i for i, src in enumerate(tags) if src in (script, "page_script")]
    assert "annotation/autosave.js" in tags and own, (template, tags)
    assert tags.index("annotation/autosave.js") < own[0], (template, tags)


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_outbox_replay_and_the_save_states_are_the_shared_module_s(name):
    code = (STATIC / name).read_text(encoding="utf-8")
    assert "saver.replay(" in code, name  # the page's changes not yet on the server, shown on load
    assert "outbox().forEach" not in code, name
    assert "AS.showItemState(" not in code and "AS.worst(" not in code, name  # saver.showState draws an item's
