//! `/admin/organizations/{orgId}/deals`: open deals block contact deletion; closing one
//! (WON or LOST) lifts that.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, patch};
use sea_orm::{ActiveModelTrait, ActiveValue::Set, EntityTrait, IntoActiveModel, Order};
use uuid::Uuid;
use wm_types::admin::{CreateDeal, Deal, UpdateDeal};
use wm_types::enums::DealStatus;
use wm_types::lookups::List;

use super::{OperatorOrg, list_in_org};
use crate::db::{self, entities::deal, tenant::find_in_org};
use crate::error::{ApiError, ApiResult};
use crate::extract::{DealId, NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::state::AppState;
use crate::views::deal_view;

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
    let txn = s.db.write().await?;
    if db::contacts::find(&*txn, org, body.contact_id)
        .await?
        .is_none()
    {
        return Err(ApiError::invalid(
            "contactId must be a contact of this organization",
        ));
    }
    let row = deal::Entity::insert(deal::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        contact_id: Set(body.contact_id),
        title: Set(body.title.trim().to_owned()),
        value_micros: Set(body.value.0),
        status: Set(DealStatus::Open.as_str().to_owned()),
        created_at: Set(s.now_ms()),
    })
    .exec_with_returning(&*txn)
    .await?;
    db::contacts::add_open_deals(&*txn, body.contact_id, 1).await?;
    txn.commit().await?;
    Ok(Created(deal_view(row)))
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<Deal>>> {
    list_in_org::<deal::Entity, _>(&s, org, (deal::Column::CreatedAt, Order::Desc), deal_view).await
}

async fn update(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    DealId(id): DealId,
    ValidatedJson(body): ValidatedJson<UpdateDeal>,
) -> ApiResult<Json<Deal>> {
    let txn = s.db.write().await?;
    let row = find_in_org::<deal::Entity>(org, id)
        .one(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found("Deal"))?;
    let open = DealStatus::Open.as_str();
    let delta = i32::from(body.status == DealStatus::Open) - i32::from(row.status == open);
    let contact = row.contact_id;
    let mut am = row.into_active_model();
    am.status = Set(body.status.as_str().to_owned());
    let row = am.update(&*txn).await?;
    if delta != 0 {
        db::contacts::add_open_deals(&*txn, contact, delta).await?;
    }
    txn.commit().await?;
    Ok(Json(deal_view(row)))
}
