//! `/admin/organizations/{orgId}/api-keys`: the plaintext key is shown once, at creation.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use sea_orm::{ActiveModelTrait, ActiveValue::Set, IntoActiveModel, Order};
use wm_types::admin::{ApiKey, ApiKeyCreated, CreateApiKey};
use wm_types::lookups::List;

use super::{list_in_org, org_of};
use crate::db::entities::api_key;
use crate::db::tenant::find_in_org;
use crate::error::{ApiError, ApiResult};
use crate::extract::{NoBody, NoQuery, ValidatedJson, path_id};
use crate::services::organizations as svc;
use crate::state::AppState;
use crate::views::api_key_view;

/// The API key routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/organizations/{org_id}/api-keys",
            get(list).post(create),
        )
        .route(
            "/admin/organizations/{org_id}/api-keys/{id}/revoke",
            post(revoke),
        )
}

async fn create(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateApiKey>,
) -> ApiResult<(StatusCode, Json<ApiKeyCreated>)> {
    let org = org_of(&s, &org).await?;
    let txn = s.db.write().await?;
    let (row, key) = svc::add_api_key(&*txn, org, body, s.now_ms()).await?;
    txn.commit().await?;
    Ok((
        StatusCode::CREATED,
        Json(ApiKeyCreated {
            api_key: api_key_view(row),
            key,
        }),
    ))
}

async fn list(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<List<ApiKey>>> {
    list_in_org::<api_key::Entity, _>(
        &s,
        &org,
        (api_key::Column::CreatedAt, Order::Asc),
        api_key_view,
    )
    .await
}

async fn revoke(
    State(s): State<AppState>,
    Path((org, id)): Path<(String, String)>,
    _: NoQuery,
    _: NoBody,
) -> ApiResult<Json<ApiKey>> {
    let org = org_of(&s, &org).await?;
    let id = path_id(&id, "API key")?;
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
