//! Deals (operator API): an open deal blocks its contact's deletion, so creating one and
//! moving one in or out of OPEN keep the contact's count of open deals in the same
//! transaction.

use crate::db::Unique;
use sea_orm::{ActiveModelTrait, ActiveValue::Set, EntityTrait, IntoActiveModel};
use uuid::Uuid;
use wm_types::admin::{CreateDeal, Deal, UpdateDeal};
use wm_types::enums::DealStatus;

use crate::db::{self, entities::deal, tenant::find_in_org};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// `POST /admin/organizations/{orgId}/deals`: an OPEN deal on a contact of the organisation.
pub async fn create(state: &AppState, org: Uuid, body: CreateDeal) -> ApiResult<Deal> {
    let txn = state.db.write().await?;
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
        status: Set(DealStatus::Open),
        created_at: Set(state.now_ms()),
    })
    .exec_with_returning(&*txn)
    .await?;
    db::contacts::add_open_deals(&*txn, body.contact_id, 1).await?;
    txn.commit().await?;
    Ok(Deal::from(row))
}

/// `PATCH /admin/organizations/{orgId}/deals/{id}`: a new status; the contact's open deals
/// follow.
pub async fn update(state: &AppState, org: Uuid, id: Uuid, body: UpdateDeal) -> ApiResult<Deal> {
    let txn = state.db.write().await?;
    let row = find_in_org::<deal::Entity>(org, id)
        .unique(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found("Deal"))?;
    let delta =
        i32::from(body.status == DealStatus::Open) - i32::from(row.status == DealStatus::Open);
    let contact = row.contact_id;
    let mut am = row.into_active_model();
    am.status = Set(body.status);
    let row = am.update(&*txn).await?;
    if delta != 0 {
        db::contacts::add_open_deals(&*txn, contact, delta).await?;
    }
    txn.commit().await?;
    Ok(Deal::from(row))
}
