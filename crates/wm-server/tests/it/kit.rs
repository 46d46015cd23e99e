//! The fixture kit: what most scenarios need before they start — a sender number, templates,
//! money in the wallet, consenting contacts, a campaign with an audience — made through the
//! operator and public APIs, as a user would.

use axum::http::Method;
use serde_json::{Value, json};

use crate::support::{IdOf, Org};

/// The operator adds a sender number; its id.
pub(crate) async fn number(org: &Org<'_>, e164: &str) -> String {
    org.admin(
        Method::POST,
        "/phone-numbers",
        Some(json!({"numberE164": e164, "displayName": "Ventas"})),
    )
    .await
    .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The operator adds an APPROVED template; its id.
pub(crate) async fn template(
    org: &Org<'_>,
    name: &str,
    category: &str,
    language: &str,
    body: &str,
) -> String {
    let body = json!({"name": name, "category": category, "language": language, "bodyText": body});
    org.admin(Method::POST, "/templates", Some(body))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A number and three templates: plain MARKETING, MARKETING with two variables, UTILITY.
pub(crate) struct Setup {
    pub number: String,
    pub plain: String,
    pub with_vars: String,
    pub utility: String,
}

pub(crate) async fn setup(org: &Org<'_>) -> Setup {
    let tpl = |name: &'static str, category: &'static str, body: &'static str| {
        template(org, name, category, "es_MX", body)
    };
    Setup {
        number: number(org, "+525500000001").await,
        plain: tpl("promo", "MARKETING", "Promo de temporada").await,
        with_vars: tpl(
            "pedido",
            "MARKETING",
            "Hola {{1}}, tu pedido {{2}} va en camino",
        )
        .await,
        utility: tpl("recordatorio", "UTILITY", "Tu cita es mañana").await,
    }
}

pub(crate) async fn top_up(org: &Org<'_>, amount: f64) -> Value {
    org.admin(
        Method::POST,
        "/wallet/top-ups",
        Some(json!({"amount": amount})),
    )
    .await
    .ok(201)
}

pub(crate) async fn balance(org: &Org<'_>) -> f64 {
    org.get("/wallet").await.ok(200)["balance"]
        .as_f64()
        .unwrap()
}

/// `n` consenting contacts in Mexico; returns their ids.
pub(crate) async fn contacts(org: &Org<'_>, n: usize, tag: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let c = org
            .contact(json!({"fullName": format!("Ana {i}"), "primaryPhone": format!("+5215512{:06}", i + 1), "consent": {"given": true}, "tags": [tag]}))
            .await;
        ids.push(c.id().to_owned());
    }
    ids
}

pub(crate) async fn campaign(org: &Org<'_>, s: &Setup, template: &str) -> String {
    org.post(
        "/campaigns",
        json!({"name": "Spring", "phoneNumberId": s.number, "templateId": template}),
    )
    .await
    .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A campaign on `template` whose audience is `ids`.
pub(crate) async fn campaign_to(
    org: &Org<'_>,
    s: &Setup,
    template: &str,
    ids: &[String],
) -> String {
    let id = campaign(org, s, template).await;
    org.post(
        &format!("/campaigns/{id}/recipients"),
        json!({"contactIds": ids}),
    )
    .await
    .ok(200);
    id
}

/// A campaign's recipients listed with `query` (say `filter=pending`), one page of 100.
pub(crate) async fn recipients(org: &Org<'_>, id: &str, query: &str) -> Vec<Value> {
    let page = org
        .get(&format!("/campaigns/{id}/recipients?pageSize=100&{query}"))
        .await
        .ok(200);
    page["data"].as_array().cloned().unwrap_or_default()
}
