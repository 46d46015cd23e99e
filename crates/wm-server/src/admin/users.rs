//! `/admin/organizations/{orgId}/users`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use wm_types::admin::CreateUser;
use wm_types::lookups::{List, User};

use super::org_of;
use crate::db;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson};
use crate::services::organizations as svc;
use crate::state::AppState;
use crate::views::user_view;

/// The user routes.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/admin/organizations/{org_id}/users",
        get(list).post(create),
    )
}

async fn create(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateUser>,
) -> ApiResult<(StatusCode, Json<User>)> {
    let org = org_of(&s, &org).await?;
    let txn = s.db.write().await?;
    let user = svc::add_user(&*txn, org, &body.full_name, &body.email, s.now_ms()).await?;
    txn.commit().await?;
    crate::changes::publish(&s, crate::changes::Change::Org(org)).await;
    Ok((StatusCode::CREATED, Json(user_view(user))))
}

async fn list(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<List<User>>> {
    let org = org_of(&s, &org).await?;
    let data = db::lookups::users(&s.db.conn, org)
        .await?
        .into_iter()
        .map(user_view)
        .collect();
    Ok(Json(List { data }))
}
