//! Contact notes (`wm_types::contacts::history`): a note with its author's name.

use std::collections::HashMap;

use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::contacts::{AuthorRef, Note};

use crate::db::entities::note;

/// A note whose author's name is known already (its writer).
pub fn with_author(m: note::Model, author: &str) -> Note {
    Note {
        id: m.id,
        contact_id: m.contact_id,
        author_id: m.author_id,
        author: AuthorRef {
            id: m.author_id,
            full_name: author.to_owned(),
        },
        body: m.body,
        created_at: Timestamp::from_millis(m.created_at),
    }
}

/// Builds wire notes, reading their authors' names in one query.
pub async fn load(
    conn: &impl ConnectionTrait,
    org: Uuid,
    rows: Vec<note::Model>,
) -> Result<Vec<Note>, DbErr> {
    let mut authors: Vec<Uuid> = rows.iter().map(|n| n.author_id).collect();
    authors.sort_unstable();
    authors.dedup();
    let names: HashMap<Uuid, String> = crate::db::lookups::users_by_id(conn, org, authors)
        .await?
        .into_iter()
        .map(|u| (u.id, u.full_name))
        .collect();
    Ok(rows
        .into_iter()
        .map(|n| {
            let name = names.get(&n.author_id).map_or("", String::as_str);
            with_author(n, name)
        })
        .collect())
}
