//! Many statuses applied at once, with exactly the outcome of applying them one by one with
//! [`super::status::apply`] in their order: what a burst of status webhooks needs (a number at full
//! speed gets two or three per message it sends).
//!
//! The recipients are looked up together (by correlation id, then by the platform's message
//! id), and the statuses are applied in *waves*: a run of statuses in their order in which
//! no recipient appears twice, so the order inside a wave cannot matter; a wave is one
//! `UPDATE … RETURNING` per status kind, guarded by the same "only forward" condition as
//! one status. Whatever is not that plain case — a failure (refund, opt-out), a status
//! whose recipient is not found here (a reply's message, one kept for later), one that
//! names the person by another form of their number — ends the wave and is applied by
//! [`super::status::apply`] itself, at its place in the order.

use std::collections::{HashMap, HashSet};

use sea_orm::sea_query::{CaseStatement, Expr, ExprTrait, Query};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};
use uuid::Uuid;
use wm_core::provider::StatusUpdate;
use wm_types::enums::RecipientStatus;

use crate::db::entities::recipient;

/// How many recipients one statement names (its bound values stay far below SQLite's and
/// PostgreSQL's limits).
const CHUNK: usize = 250;

/// A recipient as far as a wave needs it.
#[derive(Clone)]
struct Known {
    id: Uuid,
    org: Uuid,
    contact: Uuid,
    phone: String,
    message_id: Option<String>,
}

impl From<recipient::Model> for Known {
    fn from(r: recipient::Model) -> Self {
        Known {
            id: r.id,
            org: r.organization_id,
            contact: r.contact_id,
            phone: r.phone,
            message_id: r.provider_message_id,
        }
    }
}

/// Applies `statuses` (each with the organisation whose number it came to, `None` for any)
/// in order, in the caller's transaction; returns how many moved a campaign recipient on.
pub async fn apply_many(
    conn: &impl ConnectionTrait,
    statuses: &[(Option<Uuid>, StatusUpdate)],
    now: i64,
) -> Result<usize, DbErr> {
    let mut lookup = Lookup::load(conn, statuses).await?;
    let mut wave = Wave::default();
    let mut moved = 0;
    // The business-scoped user ids the waves' statuses report, remembered together.
    let mut user_ids: Vec<(Uuid, Uuid, &str)> = Vec::new();
    for (org, u) in statuses {
        let found = lookup.find(*org, u).filter(|r| plain(r, u));
        match found {
            Some(r) => {
                if wave.holds(r.id) {
                    moved += wave.apply(conn, now).await?;
                }
                if let Some(user_id) = u.recipient_user_id.as_deref()
                    && user_id != r.phone
                {
                    user_ids.push((r.org, r.contact, user_id));
                }
                lookup.named(&r, u);
                wave.push(r, u.clone());
            }
            None => {
                moved += wave.apply(conn, now).await?;
                if super::status::apply(conn, *org, u, now).await? == super::status::Applied::Moved
                {
                    moved += 1;
                }
                // What that status wrote is read from the database again by the next one
                // that needs it.
                lookup.forget(u);
            }
        }
    }
    moved += wave.apply(conn, now).await?;
    crate::services::contacts::platform::remember_user_ids(
        conn,
        crate::services::sending::CAMPAIGNS,
        &user_ids,
        now,
    )
    .await?;
    Ok(moved)
}

/// A status that a wave applies exactly as [`super::status::apply`] would: a forward move of a
/// recipient whose person needs no other form of their number remembered.
fn plain(r: &Known, u: &StatusUpdate) -> bool {
    let reported_elsewhere = u
        .recipient
        .as_deref()
        .is_some_and(|w| !w.is_empty() && Some(w) != r.phone.strip_prefix('+'));
    matches!(
        u.status,
        RecipientStatus::Sent | RecipientStatus::Delivered | RecipientStatus::Read
    ) && !reported_elsewhere
}

/// The recipients the statuses name, read once.
#[derive(Default)]
struct Lookup {
    by_id: HashMap<Uuid, Known>,
    by_message: HashMap<String, Known>,
}

impl Lookup {
    async fn load(
        conn: &impl ConnectionTrait,
        statuses: &[(Option<Uuid>, StatusUpdate)],
    ) -> Result<Self, DbErr> {
        let ids: Vec<Uuid> = statuses
            .iter()
            .filter_map(|(_, u)| u.correlation_id.as_deref())
            .filter_map(|c| Uuid::parse_str(c).ok())
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let mut lookup = Lookup::default();
        for chunk in ids.chunks(CHUNK) {
            let rows = recipient::Entity::find()
                .filter(recipient::Column::Id.is_in(chunk.to_vec()))
                .all(conn)
                .await?;
            lookup
                .by_id
                .extend(rows.into_iter().map(|r| (r.id, Known::from(r))));
        }
        // Statuses without a correlation id of a known recipient look for theirs by the
        // platform's message id.
        let by_message: Vec<String> = statuses
            .iter()
            .filter(|(org, u)| lookup.by_correlation(*org, u).is_none())
            .map(|(_, u)| u.provider_message_id.clone())
            .filter(|m| !m.is_empty())
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        for chunk in by_message.chunks(CHUNK) {
            let rows = recipient::Entity::find()
                .filter(recipient::Column::ProviderMessageId.is_in(chunk.to_vec()))
                .all(conn)
                .await?;
            for r in rows {
                if let Some(m) = r.provider_message_id.clone() {
                    lookup.by_message.entry(m).or_insert_with(|| Known::from(r));
                }
            }
        }
        Ok(lookup)
    }

    fn by_correlation(&self, org: Option<Uuid>, u: &StatusUpdate) -> Option<&Known> {
        let id = Uuid::parse_str(u.correlation_id.as_deref()?).ok()?;
        self.by_id
            .get(&id)
            .filter(|r| org.is_none_or(|o| o == r.org))
    }

    /// The recipient of `u` as `status::find` would find it now.
    fn find(&self, org: Option<Uuid>, u: &StatusUpdate) -> Option<Known> {
        if let Some(r) = self.by_correlation(org, u) {
            return Some(r.clone());
        }
        if u.provider_message_id.is_empty() {
            return None;
        }
        self.by_message
            .get(&u.provider_message_id)
            .filter(|r| org.is_none_or(|o| o == r.org))
            .cloned()
    }

    /// `u` is applied to `r`: a recipient without the platform's message id takes this one,
    /// and the statuses after it find it by that id too.
    fn named(&mut self, r: &Known, u: &StatusUpdate) {
        if r.message_id.is_some() || u.provider_message_id.is_empty() {
            return;
        }
        let named = Known {
            message_id: Some(u.provider_message_id.clone()),
            ..r.clone()
        };
        self.by_id.insert(r.id, named.clone());
        self.by_message
            .entry(u.provider_message_id.clone())
            .or_insert(named);
    }

    /// A status applied on its own may have named a recipient: the next statuses of that
    /// message id or recipient look it up again.
    fn forget(&mut self, u: &StatusUpdate) {
        self.by_message.remove(&u.provider_message_id);
        if let Some(id) = u
            .correlation_id
            .as_deref()
            .and_then(|c| Uuid::parse_str(c).ok())
        {
            self.by_id.remove(&id);
        }
    }
}

/// Statuses of distinct recipients, in their order.
#[derive(Default)]
struct Wave {
    items: Vec<(Known, StatusUpdate)>,
    ids: HashSet<Uuid>,
}

impl Wave {
    fn holds(&self, id: Uuid) -> bool {
        self.ids.contains(&id)
    }

    fn push(&mut self, r: Known, u: StatusUpdate) {
        self.ids.insert(r.id);
        self.items.push((r, u));
    }

    /// Applies the wave and empties it; how many recipients moved.
    async fn apply(&mut self, conn: &impl ConnectionTrait, now: i64) -> Result<usize, DbErr> {
        let items = std::mem::take(&mut self.items);
        self.ids.clear();
        if items.is_empty() {
            return Ok(0);
        }
        let mut moved = HashSet::new();
        for status in [
            RecipientStatus::Sent,
            RecipientStatus::Delivered,
            RecipientStatus::Read,
        ] {
            let of_kind: Vec<&(Known, StatusUpdate)> =
                items.iter().filter(|(_, u)| u.status == status).collect();
            for chunk in of_kind.chunks(CHUNK) {
                moved.extend(advance(conn, status, chunk, now).await?);
            }
        }
        // A status that did not move its recipient still leaves the platform's message id
        // on it (as `status::settled` does).
        for (r, u) in &items {
            if !moved.contains(&r.id) && r.message_id.is_none() {
                super::status::remember_message_id(conn, r.id, &u.provider_message_id).await?;
            }
        }
        // `message.sent` for each move, in the statuses' order, per organisation (if its
        // webhooks take it: `announce::recipients` asks).
        let mut announced: Vec<(Uuid, Vec<Uuid>)> = Vec::new();
        for (r, _) in items.iter().filter(|(r, _)| moved.contains(&r.id)) {
            match announced.iter_mut().find(|(org, _)| *org == r.org) {
                Some((_, ids)) => ids.push(r.id),
                None => announced.push((r.org, vec![r.id])),
            }
        }
        for (org, ids) in announced {
            for chunk in ids.chunks(CHUNK) {
                crate::services::announce::recipients(conn, org, chunk, now).await?;
            }
        }
        Ok(moved.len())
    }
}

/// One statement moving the recipients of `items` (all statuses of kind `status`) forward;
/// the ids of those it moved.
async fn advance(
    conn: &impl ConnectionTrait,
    status: RecipientStatus,
    items: &[&(Known, StatusUpdate)],
    now: i64,
) -> Result<Vec<Uuid>, DbErr> {
    use RecipientStatus as R;
    use recipient::Column as C;
    let per_row = |value: &dyn Fn(&StatusUpdate) -> sea_orm::Value| {
        let mut case = CaseStatement::new();
        for (r, u) in items {
            case = case.case(Expr::col(C::Id).eq(r.id), Expr::val(value(u)));
        }
        let e: Expr = case.into();
        e
    };
    let at = |u: &StatusUpdate| u.at_ms.unwrap_or(now).into();
    let message_id = |u: &StatusUpdate| u.provider_message_id.clone().into();
    let from: &[R] = match status {
        R::Sent => &[R::Pending],
        R::Delivered => &[R::Pending, R::Sent],
        _ => &[R::Pending, R::Sent, R::Delivered],
    };
    let mut q = Query::update();
    q.table(recipient::Entity)
        .value(
            C::ProviderMessageId,
            Expr::col(C::ProviderMessageId).if_null(per_row(&message_id)),
        )
        .value(C::SentAt, Expr::col(C::SentAt).if_null(per_row(&at)));
    match status {
        R::Sent => {}
        R::Delivered => {
            q.value(C::DeliveredAt, per_row(&at));
        }
        _ => {
            q.value(C::ReadAt, per_row(&at)).value(
                C::DeliveredAt,
                Expr::col(C::DeliveredAt).if_null(per_row(&at)),
            );
        }
    }
    q.value(C::Status, Expr::val(status.as_str()))
        .and_where(C::Id.is_in(items.iter().map(|(r, _)| r.id)))
        .and_where(C::Status.is_in(from.iter().map(|s| s.as_str())))
        .returning_col(C::Id);
    let rows = conn.query_all(&q).await?;
    rows.iter()
        .map(|row| row.try_get::<Uuid>("", "id"))
        .collect()
}
