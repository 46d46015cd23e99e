//! What a campaign costs: an organisation's own rate card and the monthly UTILITY
//! allowance, used before the wallet is charged.

use axum::http::Method;
use serde_json::json;

use crate::kit::{balance, campaign_to, contacts, setup, top_up};
use crate::support::{Org, TestApp};

#[tokio::test]
async fn an_organisation_can_override_the_rate_card() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 2, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let shipped = org.preview_cost(&id).await["byMarket"][0]["totalCost"]
        .as_f64()
        .unwrap();
    let body = json!({"markets": [{"market": "MX", "label": "Mexico (contract)", "marketing": 0.01, "utility": 0.002,
                                    "authentication": 0.003, "effectiveFrom": "2026-11-01"}]});
    org.admin(Method::PUT, "/rates", Some(body.clone()))
        .await
        .ok(200);
    assert_eq!(org.admin(Method::GET, "/rates", None).await.ok(200), body);
    let p = org.preview_cost(&id).await;
    assert_eq!(p["byMarket"][0]["label"], "Mexico (contract)");
    assert_eq!(p["byMarket"][0]["totalCost"], 0.01);
    assert_eq!(p["byMarket"][0]["rateEffectiveFrom"], "2026-11-01");
    assert_eq!(p["estimatedTotal"], 0.02);
    top_up(&org, 1.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    assert!(
        (balance(&org).await - 0.98).abs() < 1e-9,
        "charged at the organisation's price"
    );
    org.admin(Method::PUT, "/rates", Some(json!({"markets": [{"market": "MX", "label": "x", "marketing": 1, "utility": 1, "authentication": 1, "effectiveFrom": "soon"}]})))
        .await
        .assert_invalid("markets.0.effectiveFrom must be a date (YYYY-MM-DD)");
    org.admin(Method::PUT, "/rates", Some(json!({"markets": []})))
        .await
        .ok(200);
    let id2 = campaign_to(&org, &s, &s.plain, &ids_of(&org).await).await;
    let back = org.preview_cost(&id2).await["byMarket"][0]["totalCost"]
        .as_f64()
        .unwrap();
    assert_eq!(back, shipped);
}

async fn ids_of(org: &Org<'_>) -> Vec<String> {
    crate::support::ids(&org.get("/contacts?tag=t").await.ok(200))
}

#[tokio::test]
async fn the_monthly_utility_allowance_is_used_first() {
    let app = TestApp::new().await;
    let org = app
        .org_with(json!({"name": "Allowance", "includedUtilityMessages": 2}))
        .await;
    let s = setup(&org).await;
    let ids = contacts(&org, 3, "t").await;
    assert_eq!(
        org.get("/wallet").await.ok(200)["includedUtilityRemaining"],
        2
    );
    let id = campaign_to(&org, &s, &s.utility, &ids).await;
    let p = org.preview_cost(&id).await;
    assert_eq!(p["includedUtilityRemaining"], 2);
    let price = p["byMarket"][0]["totalCost"].as_f64().unwrap();
    assert!(
        (p["estimatedTotal"].as_f64().unwrap() - price).abs() < 1e-9,
        "two of three are covered"
    );
    top_up(&org, 1.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    app.send_pass().await;
    let r = org
        .get(&format!("/campaigns/{id}/recipients"))
        .await
        .ok(200);
    let covered = r["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["coveredByAllowance"] == true && x["totalCost"] == 0.0)
        .count();
    assert_eq!(covered, 2);
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(w["includedUtilityRemaining"], 0);
    assert!((w["balance"].as_f64().unwrap() - (1.0 - price)).abs() < 1e-9);
}
