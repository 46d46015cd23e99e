//! Operator routes for what campaigns are made of: sender numbers, templates and wallet
//! top-ups.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use wm_types::campaigns::{CreateTemplate, SetRates, Template, TemplateSync, TopUp, Wallet};
use wm_types::lookups::List;

use super::org::OperatorOrg;
use crate::error::ApiResult;
use crate::extract::{NoBody, NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::catalog;
use crate::state::AppState;

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/organizations/{orgId}/templates",
            get(templates).post(add_template),
        )
        .route(
            "/admin/organizations/{orgId}/templates/sync",
            post(sync_templates),
        )
        .route("/admin/organizations/{orgId}/wallet", get(wallet))
        .route("/admin/organizations/{orgId}/wallet/top-ups", post(top_up))
        .route(
            "/admin/organizations/{orgId}/rates",
            get(rates).put(set_rates),
        )
}

async fn templates(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<Template>>> {
    Ok(Json(catalog::templates(&s, org).await?))
}

async fn add_template(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateTemplate>,
) -> ApiResult<Created<Template>> {
    Ok(Created(catalog::add_template(&s, org, body).await?))
}

async fn wallet(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<Wallet>> {
    Ok(Json(catalog::wallet(&s, org).await?))
}

async fn top_up(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<TopUp>,
) -> ApiResult<Created<Wallet>> {
    Ok(Created(catalog::top_up(&s, org, body).await?))
}

async fn rates(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<SetRates>> {
    Ok(Json(catalog::rates(&s, org).await?))
}

async fn set_rates(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<SetRates>,
) -> ApiResult<Json<SetRates>> {
    Ok(Json(catalog::set_rates(&s, org, body).await?))
}

async fn sync_templates(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    _: NoBody,
) -> ApiResult<Json<TemplateSync>> {
    Ok(Json(crate::services::template_sync::sync(&s, org).await?))
}
