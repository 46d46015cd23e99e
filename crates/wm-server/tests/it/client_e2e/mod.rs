//! wm-client against the real server over TCP: every API-key endpoint through its typed
//! call, the typed errors a caller matches on, and a stream across pages. The operator
//! routes (phone numbers, templates, top-ups, inbound messages, automations) set the scene,
//! and the workers are driven by hand on the manual clock.

mod campaigns;
mod contacts;
mod errors;
mod inbox;
mod reports;
mod streams;
mod webhooks;

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;
use wm_client::Client;
use wm_client::reports::NaiveDate;
use wm_client::types::campaigns::{Audience, CreateCampaign};
use wm_client::types::contacts::{Consent, CreateContact};

use crate::support::{Org, TestApp};

/// Serves the app's router on an ephemeral loopback port; returns the API base URL.
pub(super) async fn serve(app: &TestApp) -> String {
    serve_router(app.router.clone()).await
}

pub(super) async fn serve_router(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        axum::serve(listener, router).await.ok();
    });
    format!("http://{addr}/api/v1")
}

/// A client of `base` with `key`, without retries (tests see every answer).
pub fn client(base: &str, key: &str) -> Client {
    Client::builder()
        .base_url(base)
        .api_key(key)
        .max_retries(0)
        .build()
        .expect("client")
}

pub(super) fn uuid(s: &str) -> Uuid {
    s.parse().expect("uuid")
}

pub(super) fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("rfc3339")
        .with_timezone(&Utc)
}

pub(super) fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("date")
}

/// `(number id, plain MARKETING template id, template id with two variables)` added by
/// the operator (the kit's setup).
pub(super) async fn kit(org: &Org<'_>) -> (Uuid, Uuid, Uuid) {
    let s = crate::kit::setup(org).await;
    (uuid(&s.number), uuid(&s.plain), uuid(&s.with_vars))
}

/// A draft campaign named `name` on `template` whose audience is `ids`.
pub(super) async fn campaign_to(
    c: &Client,
    name: &str,
    number: Uuid,
    template: Uuid,
    ids: Vec<Uuid>,
) -> wm_types::campaigns::Campaign {
    let campaign = c
        .campaigns()
        .create(&CreateCampaign {
            name: name.into(),
            phone_number_id: number,
            template_id: template,
            scheduled_at: None,
            variables: None,
        })
        .await
        .expect("create");
    c.campaigns()
        .add_recipients(
            campaign.id,
            &Audience {
                contact_ids: Some(ids),
                ..Default::default()
            },
        )
        .await
        .expect("audience");
    campaign
}

/// `n` consenting contacts in Mexico tagged `tag`, created one second apart.
pub(super) async fn mexicans(
    app: &TestApp,
    c: &Client,
    n: usize,
    tag: &str,
    from: usize,
) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for i in from..from + n {
        app.clock.advance(Duration::seconds(1));
        let created = c
            .contacts()
            .create(&CreateContact {
                full_name: Some(format!("Cliente {i}")),
                primary_phone: Some(format!("+5215512{:06}", i + 1)),
                consent: Some(Consent {
                    given: true,
                    at: None,
                    how: None,
                }),
                tags: Some(vec![tag.to_owned()]),
                ..Default::default()
            })
            .await
            .expect("create contact");
        ids.push(created.id);
    }
    ids
}
