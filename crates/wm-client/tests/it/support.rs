//! A wiremock server, a client pointed at it whose retry waits are recorded instead of
//! slept, and wire fixtures built from the `wm_types` structs (so they decode).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::MockServer;
use wm_client::types::Timestamp;
use wm_client::types::automations::{
    Automation, AutomationRun, AutomationStatus, AutomationSummary, RunStep, Step, StepConfig,
    StepKind, StepType, TriggerType,
};
use wm_client::types::campaigns::{
    Campaign, CampaignPhoneNumber, CampaignStats, CampaignStatus, CampaignTemplate, PhoneNumber,
    QualityRating, Recipient, RecipientContact, Template, TemplateCategory, TemplateStatus, Wallet,
};
use wm_client::types::contacts::{
    AuthorRef, ChannelRef, Consent, Contact, ContactSummary, ContactTabs, Note, TimelineEntry,
    TimelineKind,
};
use wm_client::types::conversations::{
    Conversation, ConversationContact, ConversationSummary, ConversationTabs, InitiatedBy,
};
use wm_client::types::enums::{
    ChannelType, ContactSource, ConversationStatus, RecipientStatus, StageCategory,
};
use wm_client::types::events::EventKind;
use wm_client::types::lookups::{LifecycleStage, User};
use wm_client::types::webhooks::{Delivery, DeliveryStatus, Webhook, WebhookStatus};
use wm_client::types::{Money, PageMeta};
use wm_client::{Client, ClientBuilder};

/// The API key every test client sends.
pub const KEY: &str = "wm_live_TestKey0123456789abcdefghijklmn";

/// A mock server and a client on it.
pub struct Harness {
    /// The mock server; paths are `/api/v1/...`.
    pub server: MockServer,
    /// A client with recorded (not slept) retry waits.
    pub client: Client,
    /// The waits the client asked for, in order.
    pub sleeps: Arc<Mutex<Vec<Duration>>>,
}

impl Harness {
    /// Default settings (3 retries, 200 ms base, 5 s cap).
    pub async fn new() -> Harness {
        Harness::with(|b| b).await
    }

    /// Settings changed by `f`.
    pub async fn with(f: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Harness {
        let server = MockServer::start().await;
        let sleeps = Arc::new(Mutex::new(Vec::new()));
        let record = sleeps.clone();
        let builder = Client::builder()
            .base_url(format!("{}/api/v1", server.uri()))
            .api_key(KEY)
            .sleep_with(move |d| {
                record.lock().expect("lock").push(d);
                async {}
            });
        let client = f(builder).build().expect("client");
        Harness {
            server,
            client,
            sleeps,
        }
    }

    /// The recorded waits.
    pub fn sleeps(&self) -> Vec<Duration> {
        self.sleeps.lock().expect("lock").clone()
    }

    /// The requests the server received.
    pub async fn requests(&self) -> Vec<wiremock::Request> {
        self.server.received_requests().await.expect("recording on")
    }
}

/// `/api/v1` + `p`.
pub fn api(p: &str) -> String {
    format!("/api/v1{p}")
}

/// Serialises a fixture.
pub fn js<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("fixture serialises")
}

/// A fixed instant.
pub fn at() -> Timestamp {
    Timestamp::from_millis(1_795_000_000_000)
}

/// A deterministic id.
pub fn id(n: u128) -> Uuid {
    Uuid::from_u128(n)
}

/// A list-item contact.
pub fn contact(n: u128) -> Contact {
    Contact {
        id: id(n),
        organization_id: None,
        full_name: Some(format!("Contact {n}")),
        primary_phone: Some(format!("+1415555{n:04}")),
        primary_email: None,
        company: None,
        country: None,
        source: ContactSource::Manual,
        lifecycle_stage_id: None,
        lifecycle_stage: None,
        owner_id: None,
        owner: None,
        opted_out: false,
        consent: Consent {
            given: true,
            at: Some(at()),
            how: None,
        },
        tags: vec!["vip".into()],
        identities: vec![],
        last_conversation: Some(None),
        open_deals: None,
        created_at: at(),
        updated_at: at(),
    }
}

/// `{data, meta}`.
pub fn page(data: Vec<Value>, page: u64, page_size: u64, total: u64) -> Value {
    json!({ "data": data, "meta": PageMeta::new(page, page_size, total) })
}

/// A `GET /contacts` answer.
pub fn contact_list(data: Vec<Value>, page_no: u64, page_size: u64, total: u64) -> Value {
    let mut v = page(data, page_no, page_size, total);
    v["tabs"] = js(&ContactTabs::default());
    v["summary"] = js(&ContactSummary::default());
    v
}

/// A `GET /campaigns` answer.
pub fn campaign_list(data: Vec<Value>, page_no: u64, page_size: u64, total: u64) -> Value {
    let mut v = page(data, page_no, page_size, total);
    v["tabs"] = json!({"all": total, "sending": 0, "scheduled": 0, "drafts": total, "errors": 0, "finished": 0});
    v["summary"] = json!({
        "days": 30, "since": "2026-10-22", "campaigns": total, "sent": 0, "deliveredPct": 0.0,
        "readPct": 0.0, "replies": 0, "repliesPct": 0.0, "spend": 0, "spendPerMessage": 0
    });
    v
}

/// A note.
pub fn note(n: u128) -> Note {
    Note {
        id: id(n),
        contact_id: id(1),
        author_id: id(900),
        author: AuthorRef {
            id: id(900),
            full_name: "Key User".into(),
        },
        body: format!("note {n}"),
        created_at: at(),
    }
}

/// A timeline note entry.
pub fn timeline_entry(n: u128) -> TimelineEntry {
    TimelineEntry {
        id: id(n),
        at: at(),
        kind: TimelineKind::Note {
            author: "Key User".into(),
            body: format!("entry {n}"),
        },
    }
}

/// A draft campaign.
pub fn campaign(n: u128) -> Campaign {
    Campaign {
        id: id(n),
        organization_id: id(800),
        phone_number_id: id(700),
        template_id: id(600),
        name: format!("Campaign {n}"),
        status: CampaignStatus::Draft,
        scheduled_at: None,
        started_at: None,
        completed_at: None,
        paused_at: None,
        next_batch_at: None,
        batch_size: None,
        batch_interval_min: None,
        stop_reason: None,
        source_campaign_id: None,
        variables: Default::default(),
        created_at: at(),
        updated_at: at(),
        template: CampaignTemplate {
            id: None,
            name: "promo".into(),
            category: TemplateCategory::Marketing,
            language: "en".into(),
            body_text: None,
            status: None,
        },
        phone_number: CampaignPhoneNumber {
            id: None,
            number_e164: "+14155550000".into(),
            display_name: "Shop".into(),
            quality_rating: None,
        },
        estimated_cost: None,
        real_cost: None,
        stats: CampaignStats::default(),
        errors_by_reason: None,
        last_replies: None,
    }
}

/// A pending recipient.
pub fn recipient(n: u128) -> Recipient {
    Recipient {
        id: id(n),
        contact: RecipientContact {
            id: id(n + 10_000),
            full_name: None,
            primary_phone: Some("+14155550123".into()),
        },
        market: Some("US".into()),
        status: RecipientStatus::Pending,
        sent_at: None,
        delivered_at: None,
        read_at: None,
        failed_at: None,
        error_message: None,
        total_cost: Money(25_000),
        covered_by_allowance: false,
    }
}

/// A webhook.
pub fn webhook(n: u128) -> Webhook {
    Webhook {
        id: id(n),
        url: "https://example.com/hook".into(),
        events: vec![EventKind::ContactCreated],
        description: None,
        status: WebhookStatus::Active,
        consecutive_failures: 0,
        paused_at: None,
        created_at: at(),
        updated_at: at(),
    }
}

/// A delivered delivery.
pub fn delivery(n: u128) -> Delivery {
    Delivery {
        id: id(n),
        webhook_id: id(1),
        event: EventKind::ContactCreated,
        status: DeliveryStatus::Delivered,
        attempts: 1,
        next_attempt_at: None,
        delivered_at: Some(at()),
        created_at: at(),
        attempt_log: vec![],
    }
}

/// A lifecycle stage.
pub fn stage(n: u128) -> LifecycleStage {
    LifecycleStage {
        id: id(n),
        name: "Lead".into(),
        order: 1,
        category: StageCategory::Lead,
        created_at: at(),
    }
}

/// A user.
pub fn user(n: u128) -> User {
    User {
        id: id(n),
        full_name: "Key User".into(),
        email: "key@example.com".into(),
        created_at: at(),
    }
}

/// An approved template.
pub fn template(n: u128) -> Template {
    Template {
        id: id(n),
        name: "promo".into(),
        category: TemplateCategory::Marketing,
        language: "en".into(),
        body_text: "Hi {{1}}".into(),
        status: TemplateStatus::Approved,
        variables: vec!["1".into()],
        created_at: at(),
    }
}

/// A sender number.
pub fn phone_number(n: u128) -> PhoneNumber {
    PhoneNumber {
        id: id(n),
        number_e164: "+14155550000".into(),
        display_name: "Shop".into(),
        quality_rating: QualityRating::Green,
        platform_phone_number_id: None,
        waba_id: None,
        access_token_set: false,
        mps: None,
        created_at: at(),
    }
}

/// A wallet.
pub fn wallet() -> Wallet {
    Wallet {
        currency: "USD".into(),
        balance: Money(10_000_000),
        included_utility_messages: 0,
        included_utility_remaining: 0,
        recent_entries: vec![],
    }
}

/// A validation error body.
pub fn validation(messages: &[&str]) -> Value {
    json!({"statusCode": 400, "message": messages, "error": "Bad Request"})
}

/// A business error body.
pub fn business(status: u16, code: Option<&str>, message: &str) -> Value {
    let mut v = json!({"statusCode": status, "message": message});
    if let Some(c) = code {
        v["code"] = json!(c);
    }
    v
}

/// An OPEN conversation started by the contact, unassigned.
pub fn conversation(n: u128) -> Conversation {
    Conversation {
        id: id(n),
        organization_id: id(800),
        contact_id: id(n + 10_000),
        contact: ConversationContact {
            id: id(n + 10_000),
            full_name: Some("Ana".into()),
            primary_phone: Some("+5215511110001".into()),
            primary_email: None,
        },
        channel_id: id(500),
        channel: ChannelRef {
            id: id(500),
            channel_type: ChannelType::MessagingAppA,
        },
        external_conversation_id: format!("conv-{n}"),
        status: ConversationStatus::Open,
        initiated_by: InitiatedBy::Contact,
        assigned_to_user_id: None,
        assigned_to: None,
        window_expires_at: None,
        created_at: at(),
        updated_at: at(),
    }
}

/// A `GET /conversations` answer.
pub fn conversation_list(data: Vec<Value>, page_no: u64, page_size: u64, total: u64) -> Value {
    let mut v = page(data, page_no, page_size, total);
    v["tabs"] = js(&ConversationTabs {
        all: total,
        unassigned: total,
        mine: 0,
        resolved: 0,
    });
    v["summary"] = js(&ConversationSummary {
        open: total,
        ..Default::default()
    });
    v
}

/// An ACTIVE automation: on entering Customer, wait 30 minutes, send `welcome`.
pub fn automation(n: u128) -> Automation {
    let mut trigger_config = serde_json::Map::new();
    trigger_config.insert("stage".into(), json!("Customer"));
    Automation {
        id: id(n),
        organization_id: id(800),
        created_by_user_id: id(900),
        name: format!("Automation {n}"),
        status: AutomationStatus::Active,
        trigger_type: TriggerType::LifecycleStageEntered,
        trigger_config,
        steps: vec![
            Step {
                step_type: StepType::Wait,
                config: StepConfig {
                    kind: StepKind::Minutes,
                    value: json!(30),
                },
            },
            Step {
                step_type: StepType::Action,
                config: StepConfig {
                    kind: StepKind::SendTemplate,
                    value: json!("welcome"),
                },
            },
        ],
        paused_reason: None,
        failure_count: 0,
        last_run_at: None,
        template_key: "welcome".into(),
        created_at: at(),
        updated_at: at(),
        trigger_label: "When a contact enters the stage Customer".into(),
        steps_summary: vec!["Wait 30 minutes".into(), "Send the template welcome".into()],
        runs7d: 0,
    }
}

/// A `GET /automations` answer.
pub fn automation_list(data: Vec<Value>) -> Value {
    let summary = AutomationSummary {
        active: data.len() as u64,
        paused_by_failure: 0,
        paused: 0,
        drafts: 0,
        runs7d: 0,
        runs7d_previous: 0,
        templates_sent7d: 0,
        templates_cost7d: Money(0),
        currency: "USD".into(),
        failures7d: 0,
        failure_example: None,
    };
    json!({"data": data, "summary": js(&summary)})
}

/// A completed run.
pub fn run(n: u128) -> AutomationRun {
    AutomationRun {
        id: id(n),
        automation_id: id(1),
        contact: Some(RecipientContact {
            id: id(n + 10_000),
            full_name: Some("Ana".into()),
            primary_phone: None,
        }),
        result: "completed".into(),
        steps: vec![RunStep {
            index: 0,
            step_type: StepType::Wait,
            kind: StepKind::Minutes,
            outcome: "waiting".into(),
            detail: Some("30 minutes".into()),
            at: at(),
        }],
        error: None,
        started_at: at(),
        finished_at: Some(at()),
    }
}

/// `{period, totals, series}` over 2026-11-10..=2026-11-11 with default rows.
pub fn report<T: Serialize + Default, D: Serialize + Default>(row: impl Fn(&str) -> D) -> Value {
    json!({
        "period": {"from": "2026-11-10", "to": "2026-11-11", "timezone": "UTC"},
        "totals": js(&T::default()),
        "series": [js(&row("2026-11-10")), js(&row("2026-11-11"))]
    })
}
