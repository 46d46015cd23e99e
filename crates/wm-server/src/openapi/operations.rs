//! The table of API v1's operations: method, path, tag, summary, scope, success status and
//! the wire types of the query, body and response.

use serde_json::{Value, json};
use wm_types::Page;
use wm_types::automations::*;
use wm_types::campaigns::*;
use wm_types::common::{Deleted, PageQuery};
use wm_types::contacts::*;
use wm_types::conversations::*;
use wm_types::enums::Scope;
use wm_types::imports::{ContactImport, ImportOptions};
use wm_types::lookups::{LifecycleStage, List, User};
use wm_types::reports::*;
use wm_types::webhooks::*;

use super::{Generators, Op, op, request, response};

use Scope as S;

/// Every operation of API v1 (the operator API is not part of the public contract).
pub(super) fn operations() -> Vec<Op> {
    vec![
        op(
            "get",
            "/contacts",
            "Contacts",
            "List contacts with tabs and summary",
            S::ContactsRead,
            200,
            response::<ContactList>,
        )
        .query(request::<ListContactsQuery>),
        op(
            "post",
            "/contacts",
            "Contacts",
            "Create a contact",
            S::ContactsWrite,
            201,
            response::<Contact>,
        )
        .body(request::<CreateContact>),
        op(
            "post",
            "/contacts/bulk",
            "Contacts",
            "Change the stage, tags or owner of up to 500 contacts",
            S::ContactsWrite,
            201,
            response::<BulkResult>,
        )
        .body(request::<BulkUpdateContacts>),
        op(
            "post",
            "/contacts/imports",
            "Contacts",
            "Import contacts from a CSV or NDJSON file (multipart: options, then file)",
            S::ContactsWrite,
            202,
            response::<ContactImport>,
        )
        .multipart(import_upload),
        op(
            "get",
            "/contacts/imports",
            "Contacts",
            "Contact imports, newest first",
            S::ContactsRead,
            200,
            response::<Page<ContactImport>>,
        )
        .query(request::<PageQuery>),
        op(
            "get",
            "/contacts/imports/{id}",
            "Contacts",
            "An import's status, counts and refused rows",
            S::ContactsRead,
            200,
            response::<ContactImport>,
        ),
        op(
            "get",
            "/contacts/{id}",
            "Contacts",
            "Get a contact",
            S::ContactsRead,
            200,
            response::<Contact>,
        ),
        op(
            "patch",
            "/contacts/{id}",
            "Contacts",
            "Update a contact",
            S::ContactsWrite,
            200,
            response::<Contact>,
        )
        .body(request::<UpdateContact>),
        op(
            "delete",
            "/contacts/{id}",
            "Contacts",
            "Delete a contact without history",
            S::ContactsWrite,
            200,
            response::<Deleted>,
        ),
        op(
            "get",
            "/contacts/{id}/timeline",
            "Contacts",
            "A contact's timeline",
            S::ContactsRead,
            200,
            response::<Page<TimelineEntry>>,
        )
        .query(request::<TimelineQuery>),
        op(
            "post",
            "/contacts/{id}/identities",
            "Contacts",
            "Link a channel identity",
            S::ContactsWrite,
            201,
            response::<Identity>,
        )
        .body(request::<CreateIdentity>),
        op(
            "get",
            "/contacts/{id}/notes",
            "Contacts",
            "A contact's notes",
            S::ContactsRead,
            200,
            response::<Page<Note>>,
        )
        .query(request::<PageQuery>),
        op(
            "post",
            "/contacts/{id}/notes",
            "Contacts",
            "Write a note",
            S::ContactsWrite,
            201,
            response::<Note>,
        )
        .body(request::<CreateNote>),
        op(
            "get",
            "/lifecycle-stages",
            "Lookups",
            "Lifecycle stages",
            S::ContactsRead,
            200,
            response::<List<LifecycleStage>>,
        ),
        op(
            "get",
            "/users",
            "Lookups",
            "Users",
            S::ContactsRead,
            200,
            response::<List<User>>,
        ),
        op(
            "get",
            "/templates",
            "Lookups",
            "Message templates",
            S::CampaignsRead,
            200,
            response::<List<Template>>,
        ),
        op(
            "get",
            "/phone-numbers",
            "Lookups",
            "Sender numbers",
            S::CampaignsRead,
            200,
            response::<List<PhoneNumber>>,
        ),
        op(
            "get",
            "/wallet",
            "Lookups",
            "Wallet, allowance and ledger",
            S::CampaignsRead,
            200,
            response::<Wallet>,
        ),
        op(
            "get",
            "/conversations",
            "Conversations",
            "List conversations with tabs and summary",
            S::ConversationsRead,
            200,
            response::<ConversationList>,
        )
        .query(request::<ListConversationsQuery>),
        op(
            "get",
            "/conversations/{id}",
            "Conversations",
            "Get a conversation",
            S::ConversationsRead,
            200,
            response::<Conversation>,
        ),
        op(
            "get",
            "/automations",
            "Automations",
            "List automations with summary",
            S::AutomationsRead,
            200,
            response::<AutomationList>,
        )
        .query(request::<ListAutomationsQuery>),
        op(
            "get",
            "/automations/{id}",
            "Automations",
            "Get an automation",
            S::AutomationsRead,
            200,
            response::<Automation>,
        ),
        op(
            "get",
            "/automations/{id}/logs",
            "Automations",
            "An automation's runs",
            S::AutomationsRead,
            200,
            response::<Page<AutomationRun>>,
        )
        .query(request::<LogsQuery>),
        op(
            "get",
            "/campaigns",
            "Campaigns",
            "List campaigns with tabs and summary",
            S::CampaignsRead,
            200,
            response::<CampaignList>,
        )
        .query(request::<ListCampaignsQuery>),
        op(
            "post",
            "/campaigns",
            "Campaigns",
            "Create a campaign (DRAFT)",
            S::CampaignsWrite,
            201,
            response::<Campaign>,
        )
        .body(request::<CreateCampaign>),
        op(
            "get",
            "/campaigns/{id}",
            "Campaigns",
            "Get a campaign",
            S::CampaignsRead,
            200,
            response::<Campaign>,
        ),
        op(
            "get",
            "/campaigns/{id}/recipients",
            "Campaigns",
            "A campaign's recipients",
            S::CampaignsRead,
            200,
            response::<Page<Recipient>>,
        )
        .query(request::<RecipientsQuery>),
        op(
            "post",
            "/campaigns/{id}/recipients",
            "Campaigns",
            "Add an audience",
            S::CampaignsWrite,
            200,
            response::<AudienceResult>,
        )
        .body(request::<Audience>),
        op(
            "get",
            "/campaigns/{id}/preview-cost",
            "Campaigns",
            "Preview the cost per market",
            S::CampaignsRead,
            200,
            response::<CostPreview>,
        ),
        op(
            "post",
            "/campaigns/{id}/send",
            "Campaigns",
            "Send now, scheduled or staggered",
            S::CampaignsWrite,
            200,
            response::<Campaign>,
        )
        .body(request::<SendCampaign>),
        op(
            "post",
            "/campaigns/{id}/pause",
            "Campaigns",
            "Pause a sending campaign",
            S::CampaignsWrite,
            200,
            response::<Campaign>,
        ),
        op(
            "post",
            "/campaigns/{id}/resume",
            "Campaigns",
            "Resume a paused campaign",
            S::CampaignsWrite,
            200,
            response::<Campaign>,
        ),
        op(
            "post",
            "/campaigns/{id}/duplicate",
            "Campaigns",
            "Duplicate as a new DRAFT",
            S::CampaignsWrite,
            201,
            response::<Campaign>,
        ),
        op(
            "get",
            "/reports/commercial",
            "Reports",
            "Commercial report",
            S::ReportsRead,
            200,
            response::<Report<CommercialTotals, CommercialDay>>,
        )
        .query(request::<ReportQuery>),
        op(
            "get",
            "/reports/lifecycle",
            "Reports",
            "Lifecycle report",
            S::ReportsRead,
            200,
            response::<Report<LifecycleTotals, LifecycleDay>>,
        )
        .query(request::<ReportQuery>),
        op(
            "get",
            "/reports/campaigns",
            "Reports",
            "Campaigns report",
            S::ReportsRead,
            200,
            response::<Report<CampaignTotals, CampaignDay>>,
        )
        .query(request::<ReportQuery>),
        op(
            "get",
            "/reports/wallet",
            "Reports",
            "Wallet report",
            S::ReportsRead,
            200,
            response::<Report<WalletTotals, WalletDay>>,
        )
        .query(request::<ReportQuery>),
        op(
            "get",
            "/reports/team",
            "Reports",
            "Team report",
            S::ReportsRead,
            200,
            response::<Report<TeamTotals, TeamDay>>,
        )
        .query(request::<ReportQuery>),
        op(
            "get",
            "/reports/conversations",
            "Reports",
            "Conversations report",
            S::ReportsRead,
            200,
            response::<Report<ConversationTotals, ConversationDay>>,
        )
        .query(request::<ReportQuery>),
        op(
            "get",
            "/webhooks",
            "Webhooks",
            "List webhooks",
            S::WebhooksRead,
            200,
            response::<List<Webhook>>,
        ),
        op(
            "post",
            "/webhooks",
            "Webhooks",
            "Create a webhook (the secret is shown once)",
            S::WebhooksWrite,
            201,
            response::<WebhookCreated>,
        )
        .body(request::<CreateWebhook>),
        op(
            "get",
            "/webhooks/{id}",
            "Webhooks",
            "Get a webhook",
            S::WebhooksRead,
            200,
            response::<Webhook>,
        ),
        op(
            "patch",
            "/webhooks/{id}",
            "Webhooks",
            "Update or reactivate a webhook",
            S::WebhooksWrite,
            200,
            response::<Webhook>,
        )
        .body(request::<UpdateWebhook>),
        op(
            "delete",
            "/webhooks/{id}",
            "Webhooks",
            "Delete a webhook",
            S::WebhooksWrite,
            200,
            response::<Deleted>,
        ),
        op(
            "get",
            "/webhooks/{id}/deliveries",
            "Webhooks",
            "A webhook's deliveries (7 days)",
            S::WebhooksRead,
            200,
            response::<Page<Delivery>>,
        )
        .query(request::<PageQuery>),
        op(
            "post",
            "/webhooks/{id}/deliveries/{deliveryId}/retry",
            "Webhooks",
            "Retry a failed delivery",
            S::WebhooksWrite,
            202,
            response::<Delivery>,
        ),
    ]
}

/// The upload's parts: the options (JSON) and the file.
fn import_upload(g: &mut Generators) -> Value {
    json!({
        "type": "object",
        "properties": {
            "options": request::<ImportOptions>(g),
            "file": {"type": "string", "contentMediaType": "application/octet-stream"}
        },
        "required": ["file"]
    })
}
