//! `/webhooks`: webhook management and the delivery log for API keys
//! (`webhooks:read`, `webhooks:write`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use wm_types::PageQuery;
use wm_types::common::{Deleted, Page};
use wm_types::lookups::List;
use wm_types::webhooks::{CreateWebhook, Delivery, UpdateWebhook, Webhook, WebhookCreated};

use crate::error::ApiResult;
use crate::extract::{
    Authed, NoBody, NoQuery, ValidatedJson, ValidatedQuery, WebhooksRead, WebhooksWrite, path_id,
};
use crate::services::webhooks as svc;
use crate::state::AppState;

const WHAT: &str = "Webhook";

/// The webhook routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/webhooks", get(list).post(create))
        .route("/webhooks/{id}", get(detail).patch(update).delete(remove))
        .route("/webhooks/{id}/deliveries", get(deliveries))
        .route("/webhooks/{id}/deliveries/{delivery_id}/retry", post(retry))
}

async fn create(
    State(s): State<AppState>,
    auth: Authed<WebhooksWrite>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateWebhook>,
) -> ApiResult<(StatusCode, Json<WebhookCreated>)> {
    Ok((
        StatusCode::CREATED,
        Json(svc::create(&s, auth.org_id, body).await?),
    ))
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<WebhooksRead>,
    _: NoQuery,
) -> ApiResult<Json<List<Webhook>>> {
    Ok(Json(svc::list(&s, auth.org_id).await?))
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<WebhooksRead>,
    Path(id): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(svc::get(&s, auth.org_id, path_id(&id, WHAT)?).await?))
}

async fn update(
    State(s): State<AppState>,
    auth: Authed<WebhooksWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<UpdateWebhook>,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(
        svc::update(&s, auth.org_id, path_id(&id, WHAT)?, body).await?,
    ))
}

async fn remove(
    State(s): State<AppState>,
    auth: Authed<WebhooksWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    _: NoBody,
) -> ApiResult<Json<Deleted>> {
    Ok(Json(
        svc::delete(&s, auth.org_id, path_id(&id, WHAT)?).await?,
    ))
}

async fn deliveries(
    State(s): State<AppState>,
    auth: Authed<WebhooksRead>,
    Path(id): Path<String>,
    ValidatedQuery(q): ValidatedQuery<PageQuery>,
) -> ApiResult<Json<Page<Delivery>>> {
    Ok(Json(
        svc::deliveries(&s, auth.org_id, path_id(&id, WHAT)?, q).await?,
    ))
}

async fn retry(
    State(s): State<AppState>,
    auth: Authed<WebhooksWrite>,
    Path((id, delivery)): Path<(String, String)>,
    _: NoQuery,
    _: NoBody,
) -> ApiResult<(StatusCode, Json<Delivery>)> {
    let (id, delivery) = (path_id(&id, WHAT)?, path_id(&delivery, "Delivery")?);
    Ok((
        StatusCode::ACCEPTED,
        Json(svc::retry(&s, auth.org_id, id, delivery).await?),
    ))
}
