//! A wm server on the WhatsApp provider, listening on loopback, and the fake Graph API it
//! talks to (which posts its signed webhooks back to wm), with one organisation whose
//! sender number has its Cloud API account and a synced template.

use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};
use wm_fake_graph::{
    FakeGraph, FakeGraphOptions, NumberSpec, StatusOptions, TemplateSpec, TemplateStatus,
    WebhookConfig,
};

use crate::support::{IdOf, Org, TestApp, WA_SECRET};

pub const PNID: &str = "109000000000001";
pub const WABA: &str = "209000000000001";
pub const TOKEN: &str = "EAAG-test-token";
pub const NUMBER: &str = "+525500000001";

pub struct Wa {
    pub fake: FakeGraph,
    pub app: TestApp,
    /// wm's base URL (`http://127.0.0.1:port/api/v1`).
    pub base: String,
}

impl Wa {
    /// The fake and the server; statuses follow each accepted send as `statuses` says.
    pub async fn start(statuses: StatusOptions) -> Wa {
        Wa::paced(statuses, 0).await
    }

    /// [`Wa::start`] with the server pacing each number at `mps` (0: unpaced).
    pub async fn paced(statuses: StatusOptions, mps: u32) -> Wa {
        let fake = FakeGraph::start(FakeGraphOptions::default())
            .await
            .expect("fake graph");
        let app = TestApp::whatsapp(&fake.url(), |s| {
            s.rate_limit_per_minute = 1_000_000;
            s.provider_mps = mps;
        })
        .await;
        let base = app.listen().await;
        fake.configure_webhook(Some(WebhookConfig {
            url: format!("{base}/platform/whatsapp/webhook"),
            app_secret: WA_SECRET.to_owned(),
            statuses,
            retry: Default::default(),
        }));
        fake.register_number(NumberSpec {
            phone_number_id: PNID.into(),
            waba_id: WABA.into(),
            display_phone_number: NUMBER.trim_start_matches('+').into(),
            access_token: TOKEN.into(),
        });
        Wa { fake, app, base }
    }

    /// Registers a template on the platform (APPROVED).
    pub fn template(&self, name: &str, body: &str) {
        self.fake.register_template(TemplateSpec {
            waba_id: WABA.into(),
            name: name.into(),
            language: "es_MX".into(),
            category: "MARKETING".into(),
            status: TemplateStatus::Approved,
            body_text: body.into(),
        });
    }

    /// A person writes to the number from `from` (their WhatsApp id), quoting the business
    /// message `quoted` when given, signed as the platform does; what was posted.
    pub async fn write(
        &self,
        from: &str,
        kind: wm_fake_graph::InboundKind,
        quoted: Option<&str>,
    ) -> wm_fake_graph::Posted {
        let posted = self
            .fake
            .post_inbound(wm_fake_graph::InboundMessage {
                phone_number_id: PNID.into(),
                from: from.into(),
                profile_name: Some("Ana".into()),
                kind,
                context: quoted.map(|id| wm_fake_graph::ReplyContext {
                    id: id.into(),
                    from: None,
                }),
            })
            .await
            .expect("post an inbound message");
        assert_eq!(posted.last_status, Some(200));
        posted
    }

    /// The platform posts a `message_template_status_update` for the template `promo`
    /// (`apply`: the fake's own template takes the status too, so it refuses sends), then
    /// it is applied.
    pub async fn template_event(&self, event: &str, reason: Option<&str>, apply: bool) {
        let posted = self
            .fake
            .post_template_status_update(wm_fake_graph::TemplateStatusUpdate {
                waba_id: WABA.into(),
                name: "promo".into(),
                language: "es_MX".into(),
                event: event.into(),
                reason: reason.map(str::to_owned),
                apply,
            })
            .await
            .expect("post a template status update");
        assert_eq!(posted.last_status, Some(200));
        self.settle().await;
    }

    /// Lets the fake's webhooks land and be applied (by the intake's own task or here).
    pub async fn settle(&self) {
        self.fake.wait_webhooks_idle(Duration::from_secs(10)).await;
        self.app.apply_kept().await;
    }
}

/// The organisation's sender number with its Cloud API account; returns its id.
pub async fn number(org: &Org<'_>) -> String {
    org.admin(
        Method::POST,
        "/phone-numbers",
        Some(json!({"numberE164": NUMBER, "displayName": "Ventas",
                    "platformPhoneNumberId": PNID, "wabaId": WABA, "accessToken": TOKEN})),
    )
    .await
    .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Syncs templates from the platform and returns the id of the one named `name`.
pub async fn synced_template(org: &Org<'_>, name: &str) -> String {
    org.admin(Method::POST, "/templates/sync", None)
        .await
        .ok(200);
    let list = org.get("/templates").await.ok(200);
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no template {name} in {list}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `n` consenting contacts with Mexican mobile numbers `+52155120000{i}`; their ids.
pub async fn people(org: &Org<'_>, n: usize) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let phone = format!("+5215512{:06}", i + 1);
        let c = org
            .contact(json!({"fullName": format!("Ana {i}"), "primaryPhone": phone, "consent": {"given": true}}))
            .await;
        out.push((c.id().to_owned(), phone));
    }
    out
}

/// A campaign on `template` to `ids`, its variables filled.
pub async fn campaign(org: &Org<'_>, number: &str, template: &str, ids: &[String]) -> String {
    let c = org
        .post(
            "/campaigns",
            json!({"name": "Promo", "phoneNumberId": number, "templateId": template,
                   "variables": {"1": "{{firstName}}"}}),
        )
        .await
        .ok(201);
    let id = c.id().to_owned();
    for chunk in ids.chunks(20_000) {
        org.post(
            &format!("/campaigns/{id}/recipients"),
            json!({"contactIds": chunk}),
        )
        .await
        .ok(200);
    }
    id
}

/// Runs the worker (and lets webhooks land) until the campaign leaves SENDING or `passes`
/// run out; the manual clock moves 3 s per pass so retry backoffs come due.
pub async fn drive(wa: &Wa, org: &Org<'_>, id: &str, passes: usize) -> Value {
    for _ in 0..passes {
        wa.app.send_pass().await;
        wa.settle().await;
        let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
        if c["status"] != "SENDING" {
            return c;
        }
        wa.app.clock.advance(chrono::Duration::seconds(3));
    }
    org.get(&format!("/campaigns/{id}")).await.ok(200)
}

/// An organisation ready to send: its number (with the platform account), the synced
/// template `promo`, `n` people, a campaign to all of them and `top_up` in the wallet.
pub struct Ready<'a> {
    pub org: Org<'a>,
    pub number: String,
    pub people: Vec<(String, String)>,
    pub campaign: String,
}

impl Ready<'_> {
    /// `POST /campaigns/{id}/send` now.
    pub async fn send(&self) {
        self.org
            .post(&format!("/campaigns/{}/send", self.campaign), json!({}))
            .await
            .ok(200);
    }
}

pub async fn ready(wa: &Wa, n: usize, top_up: f64) -> Ready<'_> {
    wa.template("promo", "Hola {{1}}");
    let org = wa.app.org().await;
    let number = number(&org).await;
    let tpl = synced_template(&org, "promo").await;
    let people = people(&org, n).await;
    let ids: Vec<String> = people.iter().map(|(id, _)| id.clone()).collect();
    let campaign = campaign(&org, &number, &tpl, &ids).await;
    crate::kit::top_up(&org, top_up).await;
    Ready {
        org,
        number,
        people,
        campaign,
    }
}

/// An organisation ready to answer `person` (funded, with its number and the synced
/// template `promo` "Hola {{1}}, tenemos ofertas") and the conversation their message
/// "Hola" opened: (organisation, conversation id, template id, the message's platform id).
pub async fn open_conversation<'a>(wa: &'a Wa, person: &str) -> (Org<'a>, String, String, String) {
    wa.template("promo", "Hola {{1}}, tenemos ofertas");
    let org = wa.app.org().await;
    number(&org).await;
    let tpl = synced_template(&org, "promo").await;
    crate::kit::top_up(&org, 10.0).await;
    let text = wm_fake_graph::InboundKind::Text {
        body: "Hola".into(),
    };
    let wamid = wa.write(person, text, None).await.wamid.expect("wamid");
    wa.settle().await;
    let list = org.get("/conversations").await.ok(200);
    let id = list["data"][0].id().to_owned();
    (org, id, tpl, wamid)
}

/// The message `id` as the conversation's thread shows it.
pub async fn thread_message(org: &Org<'_>, conversation: &str, id: &str) -> Value {
    let page = org
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .ok(200);
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|m| m["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no message {id} in {page}"))
}
