//! `/admin/organizations/{orgId}/webhooks`: the same management as `/webhooks`, for the
//! operator.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use wm_types::PageQuery;
use wm_types::common::{Deleted, Page};
use wm_types::lookups::List;
use wm_types::webhooks::{CreateWebhook, Delivery, UpdateWebhook, Webhook, WebhookCreated};

use super::org_of;
use crate::error::ApiResult;
use crate::extract::{NoBody, NoQuery, ValidatedJson, ValidatedQuery, path_id};
use crate::services::webhooks as svc;
use crate::state::AppState;

const WHAT: &str = "Webhook";
const BASE: &str = "/admin/organizations/{org_id}/webhooks";

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
            &format!("{BASE}/{{id}}/deliveries/{{delivery_id}}/retry"),
            post(retry),
        )
}

async fn create(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateWebhook>,
) -> ApiResult<(StatusCode, Json<WebhookCreated>)> {
    let org = org_of(&s, &org).await?;
    Ok((StatusCode::CREATED, Json(svc::create(&s, org, body).await?)))
}

async fn list(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<List<Webhook>>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(svc::list(&s, org).await?))
}

async fn detail(
    State(s): State<AppState>,
    Path((org, id)): Path<(String, String)>,
    _: NoQuery,
) -> ApiResult<Json<Webhook>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(svc::get(&s, org, path_id(&id, WHAT)?).await?))
}

async fn update(
    State(s): State<AppState>,
    Path((org, id)): Path<(String, String)>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<UpdateWebhook>,
) -> ApiResult<Json<Webhook>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(svc::update(&s, org, path_id(&id, WHAT)?, body).await?))
}

async fn remove(
    State(s): State<AppState>,
    Path((org, id)): Path<(String, String)>,
    _: NoQuery,
    _: NoBody,
) -> ApiResult<Json<Deleted>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(svc::delete(&s, org, path_id(&id, WHAT)?).await?))
}

async fn deliveries(
    State(s): State<AppState>,
    Path((org, id)): Path<(String, String)>,
    ValidatedQuery(q): ValidatedQuery<PageQuery>,
) -> ApiResult<Json<Page<Delivery>>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(
        svc::deliveries(&s, org, path_id(&id, WHAT)?, q).await?,
    ))
}

async fn retry(
    State(s): State<AppState>,
    Path((org, id, delivery)): Path<(String, String, String)>,
    _: NoQuery,
    _: NoBody,
) -> ApiResult<(StatusCode, Json<Delivery>)> {
    let org = org_of(&s, &org).await?;
    let (id, delivery) = (path_id(&id, WHAT)?, path_id(&delivery, "Delivery")?);
    Ok((
        StatusCode::ACCEPTED,
        Json(svc::retry(&s, org, id, delivery).await?),
    ))
}
