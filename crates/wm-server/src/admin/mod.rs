//! The operator API under `/admin` (stands in for the dashboard), one module per resource.
//! Authenticated by the operator token ([`crate::auth::admin_auth`]).

use axum::Router;
use uuid::Uuid;

use crate::db::entities::organization;
use crate::error::{ApiError, ApiResult};
use crate::extract::path_id;
use crate::state::AppState;
use sea_orm::EntityTrait;

pub mod api_keys;
pub mod channels;
pub mod deals;
pub mod lifecycle_stages;
pub mod organizations;
pub mod users;

/// Every operator route.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(organizations::router())
        .merge(users::router())
        .merge(api_keys::router())
        .merge(lifecycle_stages::router())
        .merge(channels::router())
        .merge(deals::router())
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
