//! `/admin/organizations/{orgId}/api-keys`: the plaintext key is shown once, at creation.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use sea_orm::{ActiveModelTrait, ActiveValue::Set, IntoActiveModel, Order};
use wm_types::admin::{ApiKey, ApiKeyCreated, CreateApiKey};
use wm_types::lookups::List;

use super::{OperatorOrg, list_in_org};
use crate::db::entities::api_key;
use crate::db::tenant::find_in_org;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiKeyId, NoBody, NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::organizations as svc;
use crate::state::AppState;
use crate::views::api_key_view;

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
    let txn = s.db.write().await?;
    let (row, key) = svc::add_api_key(&*txn, org, body, s.now_ms()).await?;
    txn.commit().await?;
    Ok(Created(ApiKeyCreated {
        api_key: api_key_view(row),
        key,
    }))
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<ApiKey>>> {
    list_in_org::<api_key::Entity, _>(
        &s,
        org,
        (api_key::Column::CreatedAt, Order::Asc),
        api_key_view,
    )
    .await
}

async fn revoke(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ApiKeyId(id): ApiKeyId,
    _: NoBody,
) -> ApiResult<Json<ApiKey>> {
    let txn = s.db.write().await?;
    let row = find_in_org::<api_key::Entity>(org, id)
        .one(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found("API key"))?;
    let row = if row.revoked_at.is_none() {
        let mut am = row.into_active_model();
        am.revoked_at = Set(Some(s.now_ms()));
        am.update(&*txn).await?
    } else {
        row
    };
    txn.commit().await?;
    crate::changes::publish(&s, crate::changes::Change::Key(id)).await;
    Ok(Json(api_key_view(row)))
}
