"""A tour of the whole wm API through the client openapi-python-client generates from the
OpenAPI document, as an integrator would write it: typed models in, typed models out,
typed errors. Run by CI against a demo server (`wm-server serve --demo`), and checked with
`mypy --strict`.

    WM_BASE_URL=http://127.0.0.1:18321/api/v1 WM_KEY=wm_live_… python3 tour.py
"""

from __future__ import annotations

import io
import os
import sys
import time
import uuid
from typing import TypeVar

from wm_api_client import AuthenticatedClient
from wm_api_client.api.automations import list_automations
from wm_api_client.api.campaigns import (
    add_campaign_recipients,
    create_campaign,
    duplicate_campaign,
    get_campaign,
    list_campaign_recipients,
    list_campaigns,
    preview_campaign_cost,
    send_campaign,
)
from wm_api_client.api.contacts import (
    add_contact_identity,
    create_contact,
    create_contact_note,
    delete_contact,
    get_contact,
    get_contact_import,
    import_contacts,
    list_contact_notes,
    list_contact_timeline,
    list_contacts,
    update_contact,
)
from wm_api_client.api.conversations import list_conversations
from wm_api_client.api.lookups import (
    get_wallet,
    list_lifecycle_stages,
    list_phone_numbers,
    list_templates,
    list_users,
)
from wm_api_client.api.reports import get_campaigns_report, get_commercial_report
from wm_api_client.api.webhooks import (
    create_webhook,
    delete_webhook,
    get_webhook,
    list_webhook_deliveries,
    list_webhooks,
)
from wm_api_client.models import (
    AddCampaignRecipientsBody,
    AddContactIdentityBody,
    BusinessErrorBody,
    Campaign,
    CampaignStatus,
    ChannelType,
    Contact,
    ContactImport,
    ContactSource,
    CreateCampaignBody,
    CreateCampaignBodyVariablesType0,
    CreateContactBody,
    CreateContactBodyConsentType0,
    CreateContactNoteBody,
    CreateWebhookBody,
    ErrorCode,
    EventKind,
    ImportContactsBody,
    ImportContactsBodyOptions,
    ImportFormat,
    ImportStatus,
    PhoneExistsErrorBody,
    SendCampaignBody,
    UpdateContactBody,
    ValidationErrorBody,
)
from wm_api_client.types import File


T = TypeVar("T")


def expect(value: object, kind: type[T], what: str) -> T:
    """The answer as the type the document promises, or the tour stops."""
    if not isinstance(value, kind):
        sys.exit(f"{what}: expected {kind.__name__}, got {value!r}")
    return value


def contacts(client: AuthenticatedClient, stamp: str) -> Contact:
    print("== Contacts")
    phone = f"+52155{stamp[-8:]}"
    body = CreateContactBody(
        full_name="Ana Tour",
        primary_phone=phone,
        tags=["vip", "tour"],
        source=ContactSource.MANUAL,
        consent=CreateContactBodyConsentType0(given=True),
    )
    created = create_contact.sync(client=client, body=body, idempotency_key=f"tour-{stamp}")
    ana = expect(created, Contact, "create a contact")
    # The same request with the same key: the same contact, not a second one.
    again = create_contact.sync(client=client, body=body, idempotency_key=f"tour-{stamp}")
    assert expect(again, Contact, "replay").id == ana.id
    # The same phone without a key: a typed 409 naming the holder.
    clash = create_contact.sync_detailed(client=client, body=CreateContactBody(full_name="Bea", primary_phone=phone))
    assert clash.status_code == 409, clash.status_code
    holder = expect(clash.parsed, PhoneExistsErrorBody, "409")
    assert holder.code == ErrorCode.CONTACT_PHONE_EXISTS and holder.contact_id == ana.id
    # A bad body: a typed validation error.
    bad = create_contact.sync_detailed(client=client, body=CreateContactBody(primary_email="not-an-email"))
    assert bad.status_code == 400
    expect(bad.parsed, ValidationErrorBody, "400")

    updated = expect(
        update_contact.sync(ana.id, client=client, body=UpdateContactBody(company="Acme")),
        Contact,
        "update",
    )
    assert updated.company == "Acme"
    found = list_contacts.sync(client=client, q="Ana Tour", source=ana.source)
    assert found is not None and not isinstance(found, (BusinessErrorBody, ValidationErrorBody))
    assert any(c.id == ana.id for c in found.data), "the list finds the contact by the source it has"
    create_contact_note.sync(ana.id, client=client, body=CreateContactNoteBody(body="Prefers mornings"))
    notes = list_contact_notes.sync(ana.id, client=client)
    assert notes is not None and not isinstance(notes, (BusinessErrorBody, ValidationErrorBody))
    assert notes.data[0].body == "Prefers mornings"
    add_contact_identity.sync(
        ana.id,
        client=client,
        body=AddContactIdentityBody(channel_type=ChannelType.EMAIL, external_id=f"ana{stamp}@example.com"),
    )
    timeline = list_contact_timeline.sync(ana.id, client=client)
    assert timeline is not None and not isinstance(timeline, (BusinessErrorBody, ValidationErrorBody))
    for entry in timeline.data:
        # Every kind of entry has its id and time.
        print(f"  {entry.at} {type(entry).__name__} {entry.id}")
    missing = get_contact.sync_detailed(uuid.uuid4(), client=client)
    assert missing.status_code == 404
    expect(missing.parsed, BusinessErrorBody, "404")
    return ana


def lookups(client: AuthenticatedClient) -> None:
    print("== Lookups")
    for name, answer in [
        ("stages", list_lifecycle_stages.sync(client=client)),
        ("users", list_users.sync(client=client)),
        ("templates", list_templates.sync(client=client)),
        ("numbers", list_phone_numbers.sync(client=client)),
    ]:
        assert answer is not None and not isinstance(answer, (BusinessErrorBody, ValidationErrorBody)), name
        print(f"  {name}: {len(answer.data)}")
    wallet = get_wallet.sync(client=client)
    assert wallet is not None and not isinstance(wallet, (BusinessErrorBody, ValidationErrorBody))
    print(f"  wallet {wallet.balance} {wallet.currency}")


def imports(client: AuthenticatedClient, stamp: str) -> None:
    print("== Import")
    csv = f"Nombre,Telefono\nLuis Tour,+52156{stamp[-8:]}\nMar Tour,+52157{stamp[-8:]}\n".encode()
    body = ImportContactsBody(
        # Sent as the generator sends it: the file first, then the options as JSON.
        file=File(payload=io.BytesIO(csv), file_name="people.csv", mime_type="text/csv"),
        options=ImportContactsBodyOptions.from_dict(
            {"format": ImportFormat.CSV.value, "mapping": {"Nombre": "fullName", "Telefono": "primaryPhone"}}
        ),
    )
    job = expect(import_contacts.sync(client=client, body=body), ContactImport, "import")
    for _ in range(300):
        job = expect(get_contact_import.sync(job.id, client=client), ContactImport, "import status")
        if job.status in (ImportStatus.COMPLETED, ImportStatus.FAILED):
            break
        time.sleep(0.1)
    assert job.status == ImportStatus.COMPLETED and job.created == 2, job
    print(f"  {job.created} created")


def campaign(client: AuthenticatedClient, ana: Contact, stamp: str) -> None:
    print("== Campaign")
    numbers = list_phone_numbers.sync(client=client)
    templates = list_templates.sync(client=client)
    assert numbers is not None and not isinstance(numbers, (BusinessErrorBody, ValidationErrorBody))
    assert templates is not None and not isinstance(templates, (BusinessErrorBody, ValidationErrorBody))
    template = next(t for t in templates.data if t.name == "spring_sale")
    variables = CreateCampaignBodyVariablesType0.from_dict({v: "{{firstName}}" for v in template.variables})
    draft = expect(
        create_campaign.sync(
            client=client,
            body=CreateCampaignBody(
                name=f"Python tour {stamp}",
                phone_number_id=numbers.data[0].id,
                template_id=template.id,
                variables=variables,
            ),
        ),
        Campaign,
        "create a campaign",
    )
    add_campaign_recipients.sync(draft.id, client=client, body=AddCampaignRecipientsBody(contact_ids=[ana.id]))
    preview = preview_campaign_cost.sync(draft.id, client=client)
    assert preview is not None and not isinstance(preview, (BusinessErrorBody, ValidationErrorBody))
    print(f"  cost {preview.estimated_total} for {preview.recipient_count}")
    key = f"send-{draft.id}"
    sent = expect(send_campaign.sync(draft.id, client=client, body=SendCampaignBody(), idempotency_key=key), Campaign, "send")
    # A retry of the send is its first answer, not a second charge.
    retried = send_campaign.sync_detailed(draft.id, client=client, body=SendCampaignBody(), idempotency_key=key)
    assert retried.status_code == 200 and retried.headers.get("idempotent-replayed") == "true"
    print(f"  sent: {sent.status}")
    for _ in range(600):
        now = expect(get_campaign.sync(draft.id, client=client), Campaign, "campaign")
        if now.status == CampaignStatus.COMPLETED:
            break
        time.sleep(0.1)
    assert now.status == CampaignStatus.COMPLETED, now.status
    print(f"  {now.status}: {now.stats.sent} sent, {now.stats.delivered} delivered")
    recipients = list_campaign_recipients.sync(draft.id, client=client)
    assert recipients is not None and not isinstance(recipients, (BusinessErrorBody, ValidationErrorBody))
    assert recipients.data[0].contact.id == ana.id
    copy = expect(duplicate_campaign.sync(draft.id, client=client), Campaign, "duplicate")
    assert copy.source_campaign_id == draft.id and copy.status == CampaignStatus.DRAFT
    listed = list_campaigns.sync(client=client)
    assert listed is not None and not isinstance(listed, (BusinessErrorBody, ValidationErrorBody))


def inbox_and_reports(client: AuthenticatedClient) -> None:
    print("== Inbox, automations, reports")
    for name, answer in [
        ("conversations", list_conversations.sync(client=client)),
        ("automations", list_automations.sync(client=client, include_archived=True)),
        ("commercial", get_commercial_report.sync(client=client)),
        ("campaigns report", get_campaigns_report.sync(client=client)),
    ]:
        assert answer is not None and not isinstance(answer, (BusinessErrorBody, ValidationErrorBody)), name
        print(f"  {name}: ok")


def webhooks(client: AuthenticatedClient) -> None:
    print("== Webhooks")
    answer = create_webhook.sync_detailed(
        client=client,
        body=CreateWebhookBody(url="https://93.184.215.14/wm", events=[EventKind.CONTACT_CREATED]),
    )
    created = answer.parsed
    assert created is not None and not isinstance(created, (BusinessErrorBody, ValidationErrorBody)), answer
    assert created.secret.startswith("whsec_")
    one = get_webhook.sync(created.id, client=client)
    assert one is not None and not isinstance(one, (BusinessErrorBody, ValidationErrorBody))
    listed = list_webhooks.sync(client=client)
    assert listed is not None and not isinstance(listed, (BusinessErrorBody, ValidationErrorBody))
    deliveries = list_webhook_deliveries.sync(created.id, client=client)
    assert deliveries is not None and not isinstance(deliveries, (BusinessErrorBody, ValidationErrorBody))
    delete_webhook.sync(created.id, client=client)


def main() -> None:
    base = os.environ["WM_BASE_URL"]
    client = AuthenticatedClient(base_url=base, token=os.environ["WM_KEY"], raise_on_unexpected_status=True)
    stamp = str(int(time.time() * 1000))
    with client as c:
        ana = contacts(c, stamp)
        lookups(c)
        imports(c, stamp)
        campaign(c, ana, stamp)
        inbox_and_reports(c)
        webhooks(c)
        leftover = expect(
            create_contact.sync(client=c, body=CreateContactBody(full_name="Temp Tour")), Contact, "temp"
        )
        delete_contact.sync(leftover.id, client=c)
    print("Python tour complete.")


if __name__ == "__main__":
    main()
