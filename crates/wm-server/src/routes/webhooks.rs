//! `/webhooks`: webhook management and the delivery log for API keys
//! (`webhooks:read`, `webhooks:write`).

use aide::axum::ApiRouter;
use aide::axum::routing::{get_with, post_with};
use axum::extract::State;
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

const TAG: &str = "Webhooks";

/// The webhook routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/webhooks",
            get_with(list, |op| op.tag(TAG).summary("List webhooks")).post_with(create, |op| {
                op.tag(TAG)
                    .summary("Create a webhook (the secret is shown once)")
            }),
        )
        .api_route(
            "/webhooks/{id}",
            get_with(detail, |op| op.tag(TAG).summary("Get a webhook"))
                .patch_with(update, |op| {
                    op.tag(TAG).summary("Update or reactivate a webhook")
                })
                .delete_with(remove, |op| op.tag(TAG).summary("Delete a webhook")),
        )
        .api_route(
            "/webhooks/{id}/deliveries",
            get_with(deliveries, |op| {
                op.tag(TAG).summary("A webhook's deliveries (7 days)")
            }),
        )
        .api_route(
            "/webhooks/{id}/deliveries/{deliveryId}/retry",
            post_with(retry, |op| op.tag(TAG).summary("Retry a failed delivery")),
        )
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
