"""Steps the console's browser tests share: signing in and out, adding people, judging with the keyboard,
downloading a file. Each works the page as a person would (labels, buttons, keys)."""

from pathlib import Path

from django.contrib.auth.models import Group

from annotation.roles import Role, ensure_groups
from tests import factories
from tests.browser.conftest import SHOTS


def organiser_account():
    """The one account an empty site starts with: an organiser (password pw-boss)."""
    ensure_groups()
    user = factories.user("boss", is_staff=True)
    user.groups.add(Group.objects.get(name=Role.ORGANISER))
    return user


def sign_in(page, username, password):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def sign_out(page):
    page.click("text=Sign out")
    page.wait_for_selector("input[name=username]")


def add_person(page, username, role="assessor"):
    """Add a person on the People page with a password; returns the password shown once."""
    page.goto("/people/")
    page.fill("#id_username", username)
    for box in page.query_selector_all("#person-form input[name=roles]"):
        if box.is_checked() != (box.get_attribute("value") == role):
            box.click()
    page.check("#person-form input[name=sign_in][value=password]")
    page.click("#add-person")
    page.wait_for_selector("#new-password")
    assert page.text_content("#new-username") == username
    return page.text_content("#new-password").strip()


def download(page, click, tmp_path, name):
    """Click something that downloads a file; the file's bytes."""
    with page.expect_download() as info:
        click()
    target = Path(tmp_path) / name
    info.value.save_as(target)
    return target.read_bytes()


def qrels_lines(data: bytes) -> dict:
    """{(topic, docid): grade} of TREC qrels text."""
    lines = {}
    for line in data.decode().splitlines():
        topic, _, docid, grade = line.split()
        lines[(topic, docid)] = int(grade)
    return lines


def whole_page_shot(page, shot, name):
    """A screenshot of the whole page, taken with the window as tall as the page (a full-page capture would draw the
    sticky top bar part way down)."""
    if not SHOTS:
        return
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": page.evaluate("document.documentElement.scrollHeight")})
    shot(page, name)
    page.set_viewport_size(size)
