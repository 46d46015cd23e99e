//! `/admin/organizations/{orgId}/deals`: open deals block contact deletion; closing one
//! (WON or LOST) lifts that.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, patch};
use sea_orm::Order;
use wm_types::admin::{CreateDeal, Deal, UpdateDeal};
use wm_types::lookups::List;

use super::org::{OperatorOrg, list_in_org};
use crate::db::entities::deal;
use crate::error::ApiResult;
use crate::extract::{DealId, NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::deals;
use crate::state::AppState;

/// The deal routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/organizations/{orgId}/deals", get(list).post(create))
        .route("/admin/organizations/{orgId}/deals/{id}", patch(update))
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateDeal>,
) -> ApiResult<Created<Deal>> {
    deals::create(&s, org, body).await.map(Created)
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<Deal>>> {
    list_in_org::<deal::Entity, _>(&s, org, (deal::Column::CreatedAt, Order::Desc)).await
}

async fn update(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    DealId(id): DealId,
    ValidatedJson(body): ValidatedJson<UpdateDeal>,
) -> ApiResult<Json<Deal>> {
    deals::update(&s, org, id, body).await.map(Json)
}
