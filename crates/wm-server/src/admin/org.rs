//! What every operator route starts from: the organisation its path names, checked to
//! exist, and the plain listing of an organisation's rows.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use sea_orm::{EntityTrait, Order, QueryOrder};
use uuid::Uuid;
use wm_types::lookups::List;

use crate::db::Unique;
use crate::db::entities::organization;
use crate::db::tenant::{TenantEntity, in_org};
use crate::error::{ApiError, ApiResult};
use crate::extract::OrgId;
use crate::reply::Json;
use crate::state::AppState;

/// The organisation of an operator path (`{orgId}`), checked to exist: a 404
/// `Organization not found` otherwise.
pub struct OperatorOrg(pub Uuid);

impl FromRequestParts<AppState> for OperatorOrg {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let OrgId(id) = OrgId::from_request_parts(parts, state).await?;
        organization::Entity::find_by_id(id)
            .unique(&state.db.conn)
            .await?
            .map(|o| OperatorOrg(o.id))
            .ok_or_else(|| ApiError::not_found("Organization"))
    }
}

/// `{data}`: every row of `E` in organisation `org`, sorted by `order`.
pub async fn list_in_org<E, W>(
    state: &AppState,
    org: Uuid,
    order: (E::Column, Order),
) -> ApiResult<Json<List<W>>>
where
    E: TenantEntity,
    E::Model: Send + Sync,
    W: From<E::Model>,
{
    let rows = in_org::<E>(org)
        .order_by(order.0, order.1)
        .all(&state.db.conn)
        .await?;
    Ok(Json(List {
        data: rows.into_iter().map(W::from).collect(),
    }))
}
