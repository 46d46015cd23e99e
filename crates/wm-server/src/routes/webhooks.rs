//! `/webhooks`: webhook management and the delivery log for API keys
//! (`webhooks:read`, `webhooks:write`).

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use wm_types::PageQuery;
use wm_types::common::{Deleted, Page};
use wm_types::lookups::List;
use wm_types::webhooks::{CreateWebhook, Delivery, UpdateWebhook, Webhook, WebhookCreated};

use crate::error::ApiResult;
use crate::extract::{
    Authed, DeliveryId, NoBody, NoQuery, ValidatedJson, ValidatedQuery, WebhookId, WebhooksRead,
    WebhooksWrite,
};
use crate::reply::{Accepted, Created, Json};
use crate::services::webhooks as svc;
use crate::state::AppState;

/// The webhook routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/webhooks", get(list).post(create))
        .route("/webhooks/{id}", get(detail).patch(update).delete(remove))
        .route("/webhooks/{id}/deliveries", get(deliveries))
        .route("/webhooks/{id}/deliveries/{deliveryId}/retry", post(retry))
}

async fn create(
    State(s): State<AppState>,
    auth: Authed<WebhooksWrite>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateWebhook>,
) -> ApiResult<Created<WebhookCreated>> {
    Ok(Created(svc::create(&s, auth.org_id, body).await?))
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
    _: NoQuery,
    WebhookId(id): WebhookId,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(svc::get(&s, auth.org_id, id).await?))
}

async fn update(
    State(s): State<AppState>,
    auth: Authed<WebhooksWrite>,
    _: NoQuery,
    WebhookId(id): WebhookId,
    ValidatedJson(body): ValidatedJson<UpdateWebhook>,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(svc::update(&s, auth.org_id, id, body).await?))
}

async fn remove(
    State(s): State<AppState>,
    auth: Authed<WebhooksWrite>,
    _: NoQuery,
    WebhookId(id): WebhookId,
    _: NoBody,
) -> ApiResult<Json<Deleted>> {
    Ok(Json(svc::delete(&s, auth.org_id, id).await?))
}

async fn deliveries(
    State(s): State<AppState>,
    auth: Authed<WebhooksRead>,
    ValidatedQuery(q): ValidatedQuery<PageQuery>,
    WebhookId(id): WebhookId,
) -> ApiResult<Json<Page<Delivery>>> {
    Ok(Json(svc::deliveries(&s, auth.org_id, id, q).await?))
}

async fn retry(
    State(s): State<AppState>,
    auth: Authed<WebhooksWrite>,
    _: NoQuery,
    WebhookId(id): WebhookId,
    DeliveryId(delivery): DeliveryId,
    _: NoBody,
) -> ApiResult<Accepted<Delivery>> {
    Ok(Accepted(svc::retry(&s, auth.org_id, id, delivery).await?))
}
