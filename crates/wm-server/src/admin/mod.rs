//! The operator API under `/admin` (stands in for the dashboard), one module per resource.
//! Authenticated by the operator token ([`crate::auth::admin_auth`]). Not part of the public
//! contract, so plain axum routes, left out of the OpenAPI document.

use crate::db::Unique;
use axum::Router;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use sea_orm::{EntityTrait, Order, QueryOrder};
use uuid::Uuid;
use wm_types::lookups::List;

use crate::db::entities::organization;
use crate::db::tenant::{TenantEntity, in_org};
use crate::error::{ApiError, ApiResult};
use crate::extract::OrgId;
use crate::reply::Json;
use crate::state::AppState;

pub mod api_keys;
pub mod automations;
pub mod catalog;
pub mod channels;
pub mod conversations;
pub mod deals;
pub mod lifecycle_stages;
pub mod organizations;
pub mod phone_numbers;
pub mod platform;
pub mod users;
pub mod webhooks;

/// Every operator route.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(organizations::router())
        .merge(users::router())
        .merge(api_keys::router())
        .merge(lifecycle_stages::router())
        .merge(channels::router())
        .merge(deals::router())
        .merge(automations::router())
        .merge(catalog::router())
        .merge(phone_numbers::router())
        .merge(conversations::router())
        .merge(platform::router())
        .merge(webhooks::router())
}

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
