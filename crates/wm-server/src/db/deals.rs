//! Deals: open ones show on the contact detail and block its deletion.

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_types::enums::DealStatus;

use super::entities::deal;
use super::tenant::in_org;

/// Open deals of several contacts, newest first.
pub async fn open_of_contacts(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contacts: Vec<Uuid>,
) -> Result<Vec<deal::Model>, DbErr> {
    if contacts.is_empty() {
        return Ok(Vec::new());
    }
    in_org::<deal::Entity>(org)
        .filter(deal::Column::ContactId.is_in(contacts))
        .filter(deal::Column::Status.eq(DealStatus::Open))
        .order_by_desc(deal::Column::CreatedAt)
        .all(conn)
        .await
}
