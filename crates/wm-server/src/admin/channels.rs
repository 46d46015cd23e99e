//! `/admin/organizations/{orgId}/channels`: channel types active in the organisation.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use sea_orm::Order;
use wm_types::admin::{Channel, CreateChannel};
use wm_types::lookups::List;

use super::org::{OperatorOrg, list_in_org};
use crate::db::entities::channel;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::organizations as svc;
use crate::state::AppState;

/// The channel routes.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/admin/organizations/{orgId}/channels",
        get(list).post(create),
    )
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateChannel>,
) -> ApiResult<Created<Channel>> {
    svc::create_channel(&s, org, body.channel_type)
        .await
        .map(Created)
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<Channel>>> {
    list_in_org::<channel::Entity, _>(&s, org, (channel::Column::CreatedAt, Order::Asc)).await
}
