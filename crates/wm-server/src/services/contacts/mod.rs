//! Contact use cases: list, get and delete here, `rows` (reads, checks, recording a
//! change), [`write`] (create and change),
//! [`bulk`] (bulk and automation changes), `history` (identities, notes, timeline) and
//! [`platform`] (who a platform id names, and what the person changes from the chat).

pub mod batch;
mod bulk;
mod history;
pub mod platform;
mod rows;
mod write;

pub use batch::create;
pub use bulk::{apply_automation_change, bulk};
pub use history::{add_identity, add_note, notes, timeline};
pub use rows::{OWNER_NOT_ORGS, STAGE_NOT_ORGS, phone_holders};
pub use write::{Author, Planned, save_change, update, write_new};

use rows::{NOT_FOUND, detail, load};

use axum::http::StatusCode;

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter};
use uuid::Uuid;
use wm_types::contacts::{Contact, ContactList, ListContactsQuery};
use wm_types::enums::ErrorCode;

use crate::db;
use crate::db::entities::{contact, conversation, message, organization, recipient};
use crate::db::tenant::in_org_by;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::views::{self, contacts::Shape};

/// `GET /contacts`.
pub async fn list(state: &AppState, org: Uuid, q: &ListContactsQuery) -> ApiResult<ContactList> {
    let conn = &state.db.conn;
    let l = state.lookups.get(conn, org).await?;
    let mut listed = db::contacts::list(conn, org, q, state.now_ms(), &l).await?;
    let rows = &listed.rows;
    let l = if listed.lookups_complete
        && l.knows(
            rows.iter().filter_map(|c| c.lifecycle_stage_id),
            rows.iter().filter_map(|c| c.owner_id),
        ) {
        l
    } else {
        // A stage or user newer than the cached copy: read again with fresh lookups.
        let l = state.lookups.reload(conn, org).await?;
        listed = db::contacts::list(conn, org, q, state.now_ms(), &l).await?;
        l
    };
    listed.list.data = views::contacts::load(conn, org, &listed.rows, Shape::ListItem, &l).await?;
    Ok(listed.list)
}

/// `GET /contacts/{id}`.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Contact> {
    let row = match state.db.reader() {
        Some(r) => r
            .contact(org, id)?
            .ok_or_else(|| ApiError::not_found(NOT_FOUND))?,
        None => load(&state.db.conn, org, id).await?,
    };
    detail(state, org, &row).await
}

/// `DELETE /contacts/{id}`: only a contact without history (open deals, conversations,
/// campaigns, messages) may go; it takes its notes, identities and timeline with it.
///
/// It first counts itself in the organisation's `contact_deletes`, which on PostgreSQL locks
/// that row until the commit: an audience step holds it shared while it writes, so the
/// delete waits for the steps under way (their recipients are then history) and the steps
/// after it skip the contact. Then it locks the contact, so a conversation that took it
/// before commits first and is seen as history, and one after finds it gone.
pub async fn delete(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<()> {
    let txn = state.db.write().await?;
    organization::Entity::update_many()
        .col_expr(
            organization::Column::ContactDeletes,
            Expr::col(organization::Column::ContactDeletes).add(1),
        )
        .filter(organization::Column::Id.eq(org))
        .exec(&*txn)
        .await?;
    let row = crate::db::tenant::find_locked::<contact::Entity>(&*txn, org, id)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    let backend = txn.get_database_backend();
    let has_campaigns = in_org_by::<recipient::Entity>(backend, org)
        .filter(recipient::Column::ContactId.eq(id))
        .count(&*txn)
        .await?
        > 0;
    let has_conversations = in_org_by::<conversation::Entity>(backend, org)
        .filter(conversation::Column::ContactId.eq(id))
        .count(&*txn)
        .await?
        > 0;
    // A message sent to them outside any conversation (an automation's template, waiting
    // for the conversation their next message opens) was paid for: history too.
    let has_messages = message::Entity::find()
        .filter(message::Column::OrganizationId.eq(org))
        .filter(message::Column::ContactId.eq(id))
        .count(&*txn)
        .await?
        > 0;
    if row.open_deals > 0 || has_campaigns || has_conversations || has_messages {
        return Err(ApiError::business(
            StatusCode::CONFLICT,
            Some(ErrorCode::ContactHasHistory),
            "The contact has history (conversations, campaigns or deals); set optedOut instead.",
        ));
    }
    db::contacts::delete(&*txn, org, id).await?;
    txn.commit().await?;
    Ok(())
}
