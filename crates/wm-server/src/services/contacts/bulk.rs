//! `POST /contacts/bulk` and the changes automations make.

use std::collections::HashSet;

use sea_orm::ConnectionTrait;
use uuid::Uuid;
use wm_core::contacts as rules;
use wm_core::tags::{merge_tags, normalize_tags};
use wm_types::contacts::{BulkResult, BulkUpdateContacts};

use super::rows::{Change, check_refs, record_change, record_saved};
use crate::db::{self, entities::contact};
use crate::error::{ApiError, ApiResult};
use crate::keys::AuthContext;
use crate::state::AppState;

/// `POST /contacts/bulk`: moves stage, adds tags and sets or removes the owner of up to 500
/// contacts in one transaction; ids of other organisations are counted as skipped.
pub async fn bulk(
    state: &AppState,
    auth: &AuthContext,
    body: BulkUpdateContacts,
) -> ApiResult<BulkResult> {
    if body.lifecycle_stage_id.is_none() && body.add_tags.is_none() && body.owner_id.is_none() {
        return Err(ApiError::invalid(
            "at least one of lifecycleStageId, addTags or ownerId must be given",
        ));
    }
    let add_tags = normalize_tags("addTags", body.add_tags.as_deref().unwrap_or_default())
        .map_err(ApiError::Validation)?;
    let org = auth.org_id;
    let now = state.now_ms();
    let ids: Vec<Uuid> = body
        .ids
        .iter()
        .copied()
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let l = state
        .lookups
        .covering(
            &state.db.conn,
            org,
            body.lifecycle_stage_id,
            body.owner_id.flatten(),
        )
        .await?;
    let txn = state.db.write().await?;
    check_refs(
        &*txn,
        &l,
        org,
        body.lifecycle_stage_id,
        body.owner_id.flatten(),
    )
    .await?;
    let rows = db::contacts::find_many(&*txn, org, ids.clone()).await?;
    let mut too_many_tags = false;
    for before in &rows {
        let current = db::contacts::fields_of(before);
        let mut fields = current.clone();
        if let Some(stage) = body.lifecycle_stage_id {
            fields.lifecycle_stage_id = Some(stage);
        }
        if let Some(owner) = body.owner_id {
            fields.owner_id = owner;
        }
        fields.tags = merge_tags(&current.tags, &add_tags);
        if fields.tags.len() > rules::MAX_TAGS {
            too_many_tags = true;
            break;
        }
        let changed = rules::changed_fields(&current, &fields);
        if changed.is_empty() {
            continue;
        }
        let after = db::contacts::save(&*txn, before, &fields, now).await?;
        let change = Change {
            before,
            after: &after,
            changed: &changed,
            bulk: true,
            triggers: true,
        };
        record_change(&*txn, &auth.user_name, change, &l, now).await?;
    }
    if too_many_tags {
        return Err(ApiError::invalid(format!(
            "addTags would give a contact more than {} tags",
            rules::MAX_TAGS
        )));
    }
    let answer = BulkResult {
        updated: rows.len() as u64,
        skipped: (ids.len() - rows.len()) as u64,
    };
    crate::idempotency::seal(&txn, axum::http::StatusCode::CREATED, &answer).await?;
    txn.commit().await?;
    Ok(answer)
}

/// Applies new fields to a contact on behalf of an automation (`by` its name): records the
/// change like a PATCH would, without starting other automations (no loops).
pub async fn apply_automation_change(
    conn: &impl ConnectionTrait,
    state: &AppState,
    before: &contact::Model,
    fields: &wm_core::contacts::ContactFields,
    by: &str,
    now: i64,
) -> ApiResult<()> {
    let changed = rules::changed_fields(&db::contacts::fields_of(before), fields);
    if changed.is_empty() {
        return Ok(());
    }
    let after = db::contacts::save(conn, before, fields, now).await?;
    let change = Change {
        before,
        after: &after,
        changed: &changed,
        bulk: false,
        triggers: false,
    };
    record_saved(conn, state, by, change, now).await
}
