//! Operator routes for what campaigns are made of: sender numbers, templates and wallet
//! top-ups.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use wm_types::campaigns::{CreateTemplate, SetRates, Template, TemplateSync, TopUp, Wallet};
use wm_types::lookups::List;

use super::org_of;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson};
use crate::services::catalog;
use crate::state::AppState;

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/organizations/{org_id}/templates",
            get(templates).post(add_template),
        )
        .route(
            "/admin/organizations/{org_id}/templates/sync",
            post(sync_templates),
        )
        .route("/admin/organizations/{org_id}/wallet", get(wallet))
        .route("/admin/organizations/{org_id}/wallet/top-ups", post(top_up))
        .route(
            "/admin/organizations/{org_id}/rates",
            get(rates).put(set_rates),
        )
}

async fn templates(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<List<Template>>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(catalog::templates(&s, org).await?))
}

async fn add_template(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateTemplate>,
) -> ApiResult<(StatusCode, Json<Template>)> {
    let org = org_of(&s, &org).await?;
    Ok((
        StatusCode::CREATED,
        Json(catalog::add_template(&s, org, body).await?),
    ))
}

async fn wallet(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<Wallet>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(catalog::wallet(&s, org).await?))
}

async fn top_up(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<TopUp>,
) -> ApiResult<(StatusCode, Json<Wallet>)> {
    let org = org_of(&s, &org).await?;
    Ok((
        StatusCode::CREATED,
        Json(catalog::top_up(&s, org, body).await?),
    ))
}

async fn rates(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<SetRates>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(catalog::rates(&s, org).await?))
}

async fn set_rates(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<SetRates>,
) -> ApiResult<Json<SetRates>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(catalog::set_rates(&s, org, body).await?))
}

async fn sync_templates(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    _: crate::extract::NoBody,
) -> ApiResult<Json<TemplateSync>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(crate::services::template_sync::sync(&s, org).await?))
}
