//! What a person changes from the chat, as their platform tells it: a new number (their
//! identity and phone follow, once per notice), a new scoped id (the same contact keeps
//! them), stopping or resuming marketing messages (`optedOut` follows).

use uuid::Uuid;
use wm_core::platform::Person;

use super::seen::{self, Key};
use crate::error::ApiResult;
use crate::services::contacts::platform::{self, On};
use crate::state::AppState;

/// The person moved their account to the number `to` ([`platform::change_number`]; their
/// new scoped id `user_id` replaces the old), once per notice (`key`).
pub async fn number_changed(
    state: &AppState,
    org: Uuid,
    on: On,
    key: Key<'_>,
    from: &Person,
    to: &str,
    user_id: Option<&str>,
) -> ApiResult<bool> {
    let now = state.now_ms();
    if seen::was_seen(&state.db.conn, key).await? {
        return Ok(false);
    }
    let txn = state.db.write().await?;
    if !seen::first_sight(&*txn, key, now).await? {
        return Ok(false);
    }
    let changed = platform::change_number(&*txn, org, on, from, to, user_id, now).await?;
    txn.commit().await?;
    Ok(changed)
}

/// The person's scoped id changed ([`platform::change_user_id`]): the same contact keeps
/// them. Applying it again changes nothing.
pub async fn user_id_changed(
    state: &AppState,
    org: Uuid,
    on: On,
    person: &Person,
    change: platform::IdChange<'_>,
) -> ApiResult<bool> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let changed = platform::change_user_id(&*txn, org, on, person, change, now).await?;
    txn.commit().await?;
    Ok(changed)
}

/// The person stopped (`stop`) or resumed marketing messages from the chat: the contact
/// they name follows ([`platform::set_opted_out`]); a person who is no contact changes
/// nothing.
pub async fn marketing_preference(
    state: &AppState,
    org: Uuid,
    on: On,
    person: &Person,
    stop: bool,
) -> ApiResult<bool> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let Some(resolved) = platform::resolve_person(&*txn, org, on, person).await? else {
        return Ok(false);
    };
    platform::remember_person(&*txn, on, &resolved, person, now).await?;
    let reason = if stop {
        "The person stopped marketing messages from the chat"
    } else {
        "The person resumed marketing messages from the chat"
    };
    let changed =
        platform::set_opted_out(&*txn, org, resolved.contact.id, stop, reason, now).await?;
    txn.commit().await?;
    Ok(changed)
}
