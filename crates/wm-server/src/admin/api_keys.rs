//! `/admin/organizations/{orgId}/api-keys`: the plaintext key is shown once, at creation.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use sea_orm::Order;
use wm_types::admin::{ApiKey, ApiKeyCreated, CreateApiKey};
use wm_types::lookups::List;

use super::org::{OperatorOrg, list_in_org};
use crate::db::entities::api_key;
use crate::error::ApiResult;
use crate::extract::{ApiKeyId, NoBody, NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::organizations as svc;
use crate::state::AppState;

/// The API key routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/organizations/{orgId}/api-keys",
            get(list).post(create),
        )
        .route(
            "/admin/organizations/{orgId}/api-keys/{id}/revoke",
            post(revoke),
        )
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateApiKey>,
) -> ApiResult<Created<ApiKeyCreated>> {
    svc::create_api_key(&s, org, body).await.map(Created)
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<ApiKey>>> {
    list_in_org::<api_key::Entity, _>(&s, org, (api_key::Column::CreatedAt, Order::Asc)).await
}

async fn revoke(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ApiKeyId(id): ApiKeyId,
    _: NoBody,
) -> ApiResult<Json<ApiKey>> {
    svc::revoke_api_key(&s, org, id).await.map(Json)
}
