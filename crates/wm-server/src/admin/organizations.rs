//! `/admin/organizations`.

use crate::db::Unique;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use sea_orm::{EntityTrait, QueryOrder};
use wm_types::admin::{CreateOrganization, Organization};
use wm_types::lookups::List;

use crate::db::entities::organization;
use crate::error::{ApiError, ApiResult};
use crate::extract::{NoQuery, OrgId, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::organizations as svc;
use crate::state::AppState;
use crate::views::organization_view;

/// The organisation routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/organizations", get(list).post(create))
        .route("/admin/organizations/{orgId}", get(detail))
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateOrganization>,
) -> ApiResult<Created<Organization>> {
    let txn = s.db.write().await?;
    let org = svc::create(&*txn, body, s.now_ms()).await?;
    txn.commit().await?;
    Ok(Created(organization_view(org)))
}

async fn list(State(s): State<AppState>, _: NoQuery) -> ApiResult<Json<List<Organization>>> {
    let rows = organization::Entity::find()
        .order_by_asc(organization::Column::CreatedAt)
        .all(&s.db.conn)
        .await?;
    Ok(Json(List {
        data: rows.into_iter().map(organization_view).collect(),
    }))
}

async fn detail(
    State(s): State<AppState>,
    _: NoQuery,
    OrgId(id): OrgId,
) -> ApiResult<Json<Organization>> {
    organization::Entity::find_by_id(id)
        .unique(&s.db.conn)
        .await?
        .map(|o| Json(organization_view(o)))
        .ok_or_else(|| ApiError::not_found("Organization"))
}
