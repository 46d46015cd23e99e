//! People's profiles on platforms that share them once a person wrote (Messenger,
//! Instagram): their name and username are read after their message is kept (never before:
//! Meta refuses), and again when they write after a week (a username changes). A contact
//! without a name takes theirs; the identity keeps the username, so the same person is
//! never a second contact. A read that fails is tried again with a growing pause, and never
//! holds a message back.

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use wm_core::platform::FetchError;

use crate::db::Unique;
use crate::db::entities::{channel, contact, identity};
use crate::services::outbound::sender::Sender;
use crate::state::AppState;

/// Reads taken per pass.
const BATCH: u64 = 20;
/// How long a taken read holds its identity (another replica takes it after).
const LEASE_MS: i64 = 60_000;
/// After this many failed reads the identity keeps its scoped id alone.
const MAX_ATTEMPTS: i32 = 8;

/// The pause before the `n`th retry: 1 minute doubling, at most 6 hours.
fn backoff_ms(n: i32) -> i64 {
    Ord::min(60_000i64 << n.clamp(0, 20), 6 * 3_600_000)
}

/// Reads the profiles that are due; how many identities it took.
pub async fn read_due(state: &AppState) -> anyhow::Result<usize> {
    let now = state.now_ms();
    let due = identity::Entity::find()
        .filter(identity::Column::ProfileDueAt.lte(now))
        .order_by_asc(identity::Column::ProfileDueAt)
        .limit(BATCH)
        .all(&state.db.conn)
        .await?;
    let mut taken = 0;
    for i in due {
        // Claimed by moving its due time past the lease: one replica reads it.
        let claimed = identity::Entity::update_many()
            .col_expr(identity::Column::ProfileDueAt, Expr::val(now + LEASE_MS))
            .filter(identity::Column::Id.eq(i.id))
            .filter(identity::Column::ProfileDueAt.eq(i.profile_due_at))
            .exec(&state.db.conn)
            .await?
            .rows_affected
            == 1;
        if claimed {
            taken += 1;
            read_one(state, &i).await?;
        }
    }
    Ok(taken)
}

async fn read_one(state: &AppState, i: &identity::Model) -> anyhow::Result<()> {
    let conn = &state.db.conn;
    let now = state.now_ms();
    let ch = channel::Entity::find_by_id(i.channel_id)
        .unique(conn)
        .await?;
    let sender = ch.as_ref().and_then(|c| Sender::of_channel(state, c));
    let source = sender.as_ref().and_then(|s| s.provider.profiles.clone());
    let account = sender.and_then(|s| s.account);
    let (Some(source), Some(account)) = (source, account) else {
        // Nothing reads it (no provider, no token): not due any more.
        return settle(state, i, None, None, now).await;
    };
    match source.profile(&i.external_id, &account).await {
        Ok(p) => settle(state, i, p.name, p.username, now).await,
        Err(FetchError::Gone(why)) => {
            tracing::info!(identity = %i.id, %why, "a person's profile is not shared");
            settle(state, i, None, None, now).await
        }
        Err(FetchError::RetryLater(why)) => {
            let attempts = i.profile_attempts + 1;
            let next = (attempts < MAX_ATTEMPTS).then(|| now + backoff_ms(attempts));
            tracing::warn!(identity = %i.id, %why, attempts, "a person's profile was not read; tried again later");
            identity::Entity::update_many()
                .col_expr(identity::Column::ProfileDueAt, Expr::val(next))
                .col_expr(identity::Column::ProfileAttempts, Expr::val(attempts))
                .filter(identity::Column::Id.eq(i.id))
                .exec(conn)
                .await?;
            Ok(())
        }
    }
}

/// Keeps what was read: the username on the identity, the name on a contact that has none.
async fn settle(
    state: &AppState,
    i: &identity::Model,
    name: Option<String>,
    username: Option<String>,
    now: i64,
) -> anyhow::Result<()> {
    let txn = state.db.write().await?;
    let mut update = identity::Entity::update_many()
        .col_expr(
            identity::Column::ProfileDueAt,
            Expr::val(Option::<i64>::None),
        )
        .col_expr(identity::Column::ProfileCheckedAt, Expr::val(now))
        .col_expr(identity::Column::ProfileAttempts, Expr::val(0));
    let renamed = username.is_some() && username != i.username;
    if renamed {
        update = update.col_expr(identity::Column::Username, Expr::val(username.clone()));
    }
    update
        .filter(identity::Column::Id.eq(i.id))
        .exec(&*txn)
        .await?;
    let named = name.or(username);
    if let Some(name) = named.filter(|n| !n.trim().is_empty()) {
        let name: String = name.trim().chars().take(160).collect();
        contact::Entity::update_many()
            .col_expr(contact::Column::FullName, Expr::val(name))
            .col_expr(contact::Column::UpdatedAt, Expr::val(now))
            .filter(contact::Column::Id.eq(i.contact_id))
            .filter(contact::Column::FullName.is_null())
            .exec(&*txn)
            .await?;
    }
    if renamed {
        crate::db::identities::refresh_mirror(&*txn, i.organization_id, i.contact_id).await?;
    }
    txn.commit().await?;
    Ok(())
}
