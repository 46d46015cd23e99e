//! `/admin/organizations/{orgId}/lifecycle-stages`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use wm_types::admin::CreateLifecycleStage;
use wm_types::lookups::{LifecycleStage, List};

use super::org_of;
use crate::db;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson};
use crate::services::organizations as svc;
use crate::state::AppState;
use crate::views::stage_view;

/// The stage routes.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/admin/organizations/{org_id}/lifecycle-stages",
        get(list).post(create),
    )
}

async fn create(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateLifecycleStage>,
) -> ApiResult<(StatusCode, Json<LifecycleStage>)> {
    let org = org_of(&s, &org).await?;
    let txn = s.db.write().await?;
    let stage = svc::add_stage(
        &*txn,
        org,
        &body.name,
        body.category,
        body.order,
        s.now_ms(),
    )
    .await?;
    txn.commit().await?;
    crate::changes::publish(&s, crate::changes::Change::Org(org)).await;
    Ok((StatusCode::CREATED, Json(stage_view(stage))))
}

async fn list(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<List<LifecycleStage>>> {
    let org = org_of(&s, &org).await?;
    let data = db::lookups::stages(&s.db.conn, org)
        .await?
        .into_iter()
        .map(stage_view)
        .collect();
    Ok(Json(List { data }))
}
