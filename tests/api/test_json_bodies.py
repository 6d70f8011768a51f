"""JSON bodies of the API are read by annotation.api.parsers.JSONParser (retrieval.ingest.load_json's checks): what
DRF's parser let through or failed on outside ValueError is a 400 saying why, never a 500."""

import pytest

from tests.annotation.test_campaign_settings import adhoc_campaign

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("body, says", [
    ("[" * 100_000, "lists and objects nested too deeply"),  # RecursionError
    ('{"settings": {"guidelines": "a\\ud800b"}}', "a lone surrogate (\\ud800)"),  # stored: UnicodeEncodeError
    ('{"settings": {"guidelines": "a\\u0000b"}}', "a NUL character"),
    ('{"settings": {"overlap": NaN}}', "NaN"),  # refused as DRF's strict parser refuses it
])
def test_a_body_no_database_stores_or_the_parser_cannot_read_is_a_400(organiser, body, says):
    campaign, _ = adhoc_campaign()
    organiser.raise_request_exception = False
    here = f"/api/campaigns/{campaign.name}"
    for url in (f"{here}/settings/", "/api/pools/", f"{here}/machine/train/"):
        response = organiser.post(url, body, content_type="application/json")
        assert response.status_code == 400, (url, response.content[:200])
        assert "JSON parse error" in response.json()["detail"] and says in response.json()["detail"]


def test_a_run_id_past_any_id_is_a_400_naming_runs(organiser):
    """It passed the serializer (no maximum) and overflowed the database's integer: a 500."""
    campaign, _ = adhoc_campaign()
    organiser.raise_request_exception = False
    response = organiser.post("/api/pools/", {"name": "p", "campaign": campaign.name, "runs": [10**20]}, format="json")
    assert response.status_code == 400 and "runs" in response.json(), response.content[:300]
