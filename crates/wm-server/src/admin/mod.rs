//! The operator API under `/admin` (stands in for the dashboard), one module per resource.
//! Authenticated by the operator token ([`crate::auth::admin_auth`]).

use axum::Router;
use uuid::Uuid;

use axum::Json;
use sea_orm::{Order, QueryOrder};
use wm_types::lookups::List;

use crate::db::entities::organization;
use crate::db::tenant::{TenantEntity, in_org};
use crate::error::{ApiError, ApiResult};
use crate::extract::path_id;
use crate::state::AppState;
use sea_orm::EntityTrait;

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

/// The organisation of an operator path; 404 when it does not exist.
pub async fn org_of(state: &AppState, raw: &str) -> ApiResult<Uuid> {
    let id = path_id(raw, "Organization")?;
    organization::Entity::find_by_id(id)
        .one(&state.db.conn)
        .await?
        .map(|o| o.id)
        .ok_or_else(|| ApiError::not_found("Organization"))
}

/// `{data}`: every row of `E` in the organisation of an operator path, sorted by `order`.
pub async fn list_in_org<E, W>(
    state: &AppState,
    raw_org: &str,
    order: (E::Column, Order),
    view: fn(E::Model) -> W,
) -> ApiResult<Json<List<W>>>
where
    E: TenantEntity,
    E::Model: Send + Sync,
{
    let org = org_of(state, raw_org).await?;
    let rows = in_org::<E>(org)
        .order_by(order.0, order.1)
        .all(&state.db.conn)
        .await?;
    Ok(Json(List {
        data: rows.into_iter().map(view).collect(),
    }))
}
