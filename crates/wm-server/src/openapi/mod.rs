//! The OpenAPI 3.1 document of API v1, generated from the wire types' schemars schemas and
//! the table of operations below (a test checks every operation against the router, and
//! another checks the committed `docs/openapi.json` for drift).
//!
//! Responses are described as the server writes them (serialisation contract, in
//! `components/schemas`); request bodies and queries as the server reads them
//! (deserialisation contract, inlined).

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};
use wm_types::Page;
use wm_types::automations::*;
use wm_types::campaigns::*;
use wm_types::common::{BusinessErrorBody, Deleted, PageQuery, ValidationErrorBody};
use wm_types::contacts::*;
use wm_types::conversations::*;
use wm_types::enums::Scope;
use wm_types::lookups::{LifecycleStage, List, User};
use wm_types::reports::*;
use wm_types::webhooks::*;

type Gen = fn(&mut Generators) -> Value;

/// The two generators: responses (referenced components) and requests (inlined).
pub struct Generators {
    responses: SchemaGenerator,
    requests: SchemaGenerator,
}

impl Generators {
    fn new() -> Self {
        let mut out = SchemaSettings::draft2020_12();
        out.definitions_path = "/components/schemas".into();
        out.contract = Contract::Serialize;
        out.meta_schema = None;
        let mut input = SchemaSettings::draft2020_12();
        input.inline_subschemas = true;
        input.meta_schema = None;
        Generators {
            responses: out.into_generator(),
            requests: input.into_generator(),
        }
    }
}

fn response<T: JsonSchema>(g: &mut Generators) -> Value {
    g.responses.subschema_for::<T>().to_value()
}

fn request<T: JsonSchema>(g: &mut Generators) -> Value {
    let mut v = g.requests.root_schema_for::<T>().to_value();
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    v
}

/// One operation of the API.
struct Op {
    method: &'static str,
    path: &'static str,
    tag: &'static str,
    summary: &'static str,
    scope: Scope,
    query: Option<Gen>,
    body: Option<Gen>,
    status: u16,
    response: Gen,
}

const fn op(
    method: &'static str,
    path: &'static str,
    tag: &'static str,
    summary: &'static str,
    scope: Scope,
    status: u16,
    response: Gen,
) -> Op {
    Op {
        method,
        path,
        tag,
        summary,
        scope,
        query: None,
        body: None,
        status,
        response,
    }
}

impl Op {
    const fn query(mut self, q: Gen) -> Op {
        self.query = Some(q);
        self
    }
    const fn body(mut self, b: Gen) -> Op {
        self.body = Some(b);
        self
    }
}

use Scope as S;

/// Every operation of API v1 (the operator API is not part of the public contract).
fn operations() -> Vec<Op> {
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

fn parameters(op: &Op, g: &mut Generators) -> Vec<Value> {
    let mut out = Vec::new();
    for seg in op.path.split('/') {
        if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            out.push(json!({"name": name, "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}}));
        }
    }
    if let Some(q) = op.query {
        let schema = q(g);
        let required: Vec<String> = schema["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(props) = schema["properties"].as_object() {
            for (name, s) in props {
                let mut p = json!({"name": name, "in": "query", "required": required.contains(name), "schema": s});
                if name == "ids" {
                    p["style"] = json!("form");
                    p["explode"] = json!(false);
                }
                out.push(p);
            }
        }
    }
    out
}

fn error(g: &mut Generators, validation: bool) -> Value {
    let business = response::<BusinessErrorBody>(g);
    let schema = if validation {
        json!({"oneOf": [response::<ValidationErrorBody>(g), business]})
    } else {
        business
    };
    json!({"description": "Error", "content": {"application/json": {"schema": schema}}})
}

/// The document.
pub fn document() -> Value {
    let mut g = Generators::new();
    let mut paths: Map<String, Value> = Map::new();
    for op in operations() {
        let mut o = json!({
            "tags": [op.tag],
            "summary": op.summary,
            "operationId": format!("{}{}", op.method, op.path.replace(['/', '{', '}', '-'], "_")),
            "description": format!("Requires the scope `{}`.", op.scope),
            "security": [{"apiKey": []}],
            "parameters": parameters(&op, &mut g),
            "responses": {
                op.status.to_string(): {
                    "description": "Success",
                    "headers": {
                        "RateLimit-Limit": {"schema": {"type": "integer"}},
                        "RateLimit-Remaining": {"schema": {"type": "integer"}},
                        "RateLimit-Reset": {"schema": {"type": "integer"}}
                    },
                    "content": {"application/json": {"schema": (op.response)(&mut g)}}
                },
                "400": error(&mut g, true),
                "401": error(&mut g, false),
                "403": error(&mut g, false),
                "404": error(&mut g, false),
                "429": error(&mut g, false)
            }
        });
        if matches!(op.method, "post" | "patch" | "delete") {
            o["responses"]["409"] = error(&mut g, false);
        }
        if op.path == "/contacts/{id}/identities" {
            o["responses"]["200"] = json!({"description": "Already linked to this contact", "content": {"application/json": {"schema": response::<Identity>(&mut g)}}});
        }
        if let Some(b) = op.body {
            o["requestBody"] =
                json!({"required": false, "content": {"application/json": {"schema": b(&mut g)}}});
        }
        let entry = paths.entry(op.path.to_owned()).or_insert_with(|| json!({}));
        entry[op.method] = o;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "wm API",
            "version": "1.0.0",
            "description": "Multi-tenant customer messaging and marketing: contacts, campaigns, conversations, automations, reports and webhooks. Every call carries `Authorization: Bearer <API key>`; more than 600 requests in any 60 s answer 429."
        },
        "servers": [{"url": "/api/v1"}],
        "components": {
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer", "description": "wm_live_… API key"}},
            "schemas": g.responses.take_definitions(true)
        },
        "paths": paths
    })
}

/// The (method, path) pairs of the document, for checking them against the router.
pub fn routes() -> Vec<(&'static str, &'static str)> {
    operations()
        .into_iter()
        .map(|o| (o.method, o.path))
        .collect()
}

/// A self-contained page listing the operations, read from `openapi.json`.
pub const DOCS_HTML: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>wm API v1</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
h2{margin-top:2rem;border-bottom:1px solid #ddd}.op{margin:.6rem 0;padding:.5rem .8rem;border:1px solid #e4e4e4;border-radius:6px}
.m{display:inline-block;min-width:4.5rem;font-weight:600;text-transform:uppercase}.get{color:#1a7f37}.post{color:#0550ae}.patch{color:#8250df}.delete{color:#cf222e}
code{background:#f4f4f4;padding:0 .3rem;border-radius:3px}details pre{background:#f7f7f7;padding:.6rem;overflow:auto;font-size:12px}</style></head>
<body><h1>wm API v1</h1><p>The machine-readable document is <a href="openapi.json">openapi.json</a> (OpenAPI 3.1).</p><div id="ops">Loading…</div>
<script>
fetch('openapi.json').then(r=>r.json()).then(doc=>{
  const byTag={};
  for(const [path,methods] of Object.entries(doc.paths)) for(const [m,op] of Object.entries(methods)) (byTag[op.tags[0]] ||= []).push([m,path,op]);
  const el=document.getElementById('ops'); el.textContent='';
  for(const [tag,ops] of Object.entries(byTag)){
    const h=document.createElement('h2'); h.textContent=tag; el.appendChild(h);
    for(const [m,path,op] of ops){
      const d=document.createElement('div'); d.className='op';
      const ok=Object.keys(op.responses).find(s=>s<'300');
      d.innerHTML=`<span class="m ${m}">${m}</span> <code>${path}</code> — ${op.summary}<br><small>${op.description} Success: ${ok}.</small>`;
      const det=document.createElement('details'); const s=document.createElement('summary'); s.textContent='details';
      const pre=document.createElement('pre'); pre.textContent=JSON.stringify({parameters:op.parameters,requestBody:op.requestBody,response:op.responses[ok]},null,2);
      det.append(s,pre); d.appendChild(det); el.appendChild(d);
    }
  }
});
</script></body></html>"#;
