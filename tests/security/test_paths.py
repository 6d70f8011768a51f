"""No path on disk is taken from user input: names that look like paths stay file names inside the folder."""

from datetime import UTC, datetime

import pytest

from annotation.api.results import car_assessments_zip
from assessments.exporters.car_y3 import export_car_assessments
from assessments.exporters.common import resolve_scope
from tests import factories

EVIL = ["../../outside", "/etc/passwd", "..", ".hidden", "a/../../b", "C:\\x"]


@pytest.fixture
def path_like_names(db):
    coll = factories.collection("car")
    for i, name in enumerate(EVIL):
        topic = factories.topic(coll, name, title="t")
        passage = factories.passage(coll, f"p{i}")
        user = factories.user(f"../judge{i}")
        factories.judgement(user, topic, passage, layer="notes", value="n", client_time=datetime(2024, 5, 1, tzinfo=UTC))
    return coll


def test_the_y3_export_keeps_path_like_topics_and_assessors_inside_its_folder(path_like_names, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    export_car_assessments(resolve_scope(collection="car"), out)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    names = [p.name for p in out.iterdir()]
    assert len(names) == len(EVIL)
    assert all(p.is_file() and p.parent == out for p in out.iterdir())
    assert not any(name.startswith(".") or "/" in name or "\\" in name for name in names)


def test_the_api_zip_has_no_path_like_member_names(path_like_names):
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(car_assessments_zip(collection="car"))) as archive:
        members = archive.namelist()
    assert len(members) == len(EVIL)
    assert not any(m.startswith(".") or "/" in m or "\\" in m for m in members)  # no folder, nothing hidden
