//! `/admin/organizations/{orgId}/webhooks`: the same management as `/webhooks`, for the
//! operator.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use wm_types::PageQuery;
use wm_types::common::{Deleted, Page};
use wm_types::lookups::List;
use wm_types::webhooks::{CreateWebhook, Delivery, UpdateWebhook, Webhook, WebhookCreated};

use super::org::OperatorOrg;
use crate::error::ApiResult;
use crate::extract::{DeliveryId, NoBody, NoQuery, ValidatedJson, ValidatedQuery, WebhookId};
use crate::reply::{Accepted, Created, Json};
use crate::services::webhooks as svc;
use crate::state::AppState;

const BASE: &str = "/admin/organizations/{orgId}/webhooks";

/// The operator's webhook routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(BASE, get(list).post(create))
        .route(
            &format!("{BASE}/{{id}}"),
            get(detail).patch(update).delete(remove),
        )
        .route(&format!("{BASE}/{{id}}/deliveries"), get(deliveries))
        .route(
            &format!("{BASE}/{{id}}/deliveries/{{deliveryId}}/retry"),
            post(retry),
        )
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateWebhook>,
) -> ApiResult<Created<WebhookCreated>> {
    Ok(Created(svc::create(&s, org, body).await?))
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<Webhook>>> {
    Ok(Json(svc::list(&s, org).await?))
}

async fn detail(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    WebhookId(id): WebhookId,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(svc::get(&s, org, id).await?))
}

async fn update(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    WebhookId(id): WebhookId,
    ValidatedJson(body): ValidatedJson<UpdateWebhook>,
) -> ApiResult<Json<Webhook>> {
    Ok(Json(svc::update(&s, org, id, body).await?))
}

async fn remove(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    WebhookId(id): WebhookId,
    _: NoBody,
) -> ApiResult<Json<Deleted>> {
    Ok(Json(svc::delete(&s, org, id).await?))
}

async fn deliveries(
    State(s): State<AppState>,
    ValidatedQuery(q): ValidatedQuery<PageQuery>,
    OperatorOrg(org): OperatorOrg,
    WebhookId(id): WebhookId,
) -> ApiResult<Json<Page<Delivery>>> {
    Ok(Json(svc::deliveries(&s, org, id, q).await?))
}

async fn retry(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    WebhookId(id): WebhookId,
    DeliveryId(delivery): DeliveryId,
    _: NoBody,
) -> ApiResult<Accepted<Delivery>> {
    Ok(Accepted(svc::retry(&s, org, id, delivery).await?))
}
