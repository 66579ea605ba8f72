"""A partner's tests against the sandbox's image (fixtures in conftest.py)."""
import pytest

from sandbox_client import HttpError


def test_token_and_one_call(partner):
    customer = partner.call("POST", "/customers", {"name": "Acme Corp", "email": "ap@acme.test"})
    assert partner.call("GET", f"/customers/{customer['id']}") == customer


def test_an_error_is_the_http_error(partner):
    with pytest.raises(HttpError) as refused:
        partner.call("GET", "/customers?limit=0")
    assert refused.value.status == 400
    assert "limit" in refused.value.body["validation_errors"]


# #region webhook
def test_webhook_reaches_a_receiver_on_this_machine(partner, receiver):
    partner.call("POST", "/webhooks", {"endpoint_url": f"{receiver.url}/hooks", "topic": "customer_created"})
    customer = partner.call("POST", "/customers", {"name": "Globex"})
    path, body = receiver.received.get(timeout=10)
    assert (path, body["topic"], body["entity_id"], body["data"]["name"]) == ("/hooks", "customer_created", customer["id"], "Globex")


def test_events_without_a_receiver(partner):
    customer = partner.call("POST", "/customers", {"name": "Initech"})
    events = partner.call("GET", f"/_sandbox/events?topic=customer_created&entity_id={customer['id']}")
    assert [event["entity_id"] for event in events["data"]] == [customer["id"]]
# #endregion webhook


def test_the_clock_moves_a_month_on(partner):
    moved = partner.call("POST", "/_sandbox/clock/advance", {"seconds": 31 * 86400})
    assert moved["offset_seconds"] >= 31 * 86400 - 1
