//! A customer's answer credited to the campaign message it answers (REPLIED), announced as
//! `campaign.replied`, and the automations that wait for it started.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter, QueryOrder,
};
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::enums::RecipientStatus;
use wm_types::events::{CampaignRepliedData, EventKind};

use crate::db::entities::recipient;

/// Marks the contact's campaign message that was replied to as REPLIED: the message the
/// reply quotes (the platform's id in `replied_to`) when it is one of ours, else their
/// latest SENT, DELIVERED or READ one. A reply that quotes a known message credits that
/// message only, once: were it already REPLIED (a second answer to the same message), the
/// fallback would credit some other campaign with a reply it never got. Announced as
/// `campaign.replied` with the answer (`message`, when kept). `false` when nothing was
/// marked.
pub async fn mark_replied(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    replied_to: Option<&str>,
    message: Option<Uuid>,
    now: i64,
) -> Result<bool, DbErr> {
    use RecipientStatus as R;
    let open = [R::Sent.as_str(), R::Delivered.as_str(), R::Read.as_str()];
    let mine = || {
        recipient::Entity::find()
            .filter(recipient::Column::OrganizationId.eq(org))
            .filter(recipient::Column::ContactId.eq(contact))
    };
    // The message quoted is credited whoever the sender resolved to (the person may write
    // from another form of the number, or a colleague may forward it).
    let quoted = match replied_to {
        Some(id) => {
            recipient::Entity::find()
                .filter(recipient::Column::OrganizationId.eq(org))
                .filter(recipient::Column::ProviderMessageId.eq(id))
                .one(conn)
                .await?
        }
        None => None,
    };
    let r = match quoted {
        Some(r) if open.contains(&r.status.as_str()) => r,
        // Known, but already replied to (or never reached the person): nothing to credit.
        Some(_) => return Ok(false),
        None => {
            let latest = mine()
                .filter(recipient::Column::Status.is_in(open))
                .order_by_desc(recipient::Column::SentAt)
                .one(conn)
                .await?;
            let Some(r) = latest else { return Ok(false) };
            r
        }
    };
    // Still open under the write: two deliveries of one reply credit it once.
    let marked = recipient::Entity::update_many()
        .col_expr(recipient::Column::Status, Expr::val(R::Replied))
        .col_expr(recipient::Column::RepliedAt, Expr::val(now))
        .col_expr(
            recipient::Column::DeliveredAt,
            Expr::col(recipient::Column::DeliveredAt).if_null(now),
        )
        .filter(recipient::Column::Id.eq(r.id))
        .filter(recipient::Column::Status.is_in(open))
        .exec(conn)
        .await?
        .rows_affected;
    if marked == 0 {
        return Ok(false);
    }
    crate::services::automations::on_campaign_replied(
        conn,
        org,
        r.contact_id,
        r.campaign_id,
        r.id,
        now,
    )
    .await?;
    let data = CampaignRepliedData {
        organization_id: org,
        campaign_id: r.campaign_id,
        recipient_id: r.id,
        contact_id: r.contact_id,
        message_id: message,
        replied_at: Timestamp::from_millis(now),
    };
    crate::db::outbox::push(conn, org, EventKind::CampaignReplied, &data, now).await?;
    Ok(true)
}
