//! Campaigns (`wm_types::campaigns`): a row with its template, number and stats and, on the
//! detail, its cost so far, errors by reason and last replies, loaded for the whole batch.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use uuid::Uuid;
use wm_types::campaigns::{
    Campaign, CampaignPhoneNumber, CampaignTemplate, ErrorByReason, LastReply, Recipient,
    RecipientContact, TemplateCategory,
};
use wm_types::enums::RecipientStatus;
use wm_types::{Money, Timestamp};

use crate::db::entities::{campaign, contact, phone_number, recipient, template};
use crate::db::tallies::{self, Dim};
use crate::error::ApiResult;

use crate::db::campaigns::variables_of;

/// Builds wire campaigns, loading templates, numbers and stats in one query each; with
/// `detail`, also their cost so far, errors by reason and last replies (the estimate is the
/// pricing's, added by the service).
pub async fn load(
    conn: &impl ConnectionTrait,
    rows: &[campaign::Model],
    detail: bool,
) -> ApiResult<Vec<Campaign>> {
    let ids: Vec<Uuid> = rows.iter().map(|c| c.id).collect();
    let tids: Vec<Uuid> = rows.iter().map(|c| c.template_id).collect();
    let pids: Vec<Uuid> = rows.iter().map(|c| c.phone_number_id).collect();
    let templates = crate::db::by_id::<template::Entity>(conn, tids, |t| t.id).await?;
    let numbers = crate::db::by_id::<phone_number::Entity>(conn, pids, |p| p.id).await?;
    let mut counts = crate::db::campaigns::counts(conn, &ids).await?;
    let mut out = Vec::with_capacity(rows.len());
    for c in rows {
        let t = templates.get(&c.template_id);
        let p = numbers.get(&c.phone_number_id);
        let counted = counts.remove(&c.id).unwrap_or_default();
        let mut v = Campaign {
            id: c.id,
            organization_id: c.organization_id,
            phone_number_id: c.phone_number_id,
            template_id: c.template_id,
            name: c.name.clone(),
            status: c.status,
            scheduled_at: c.scheduled_at.map(Timestamp::from_millis),
            started_at: c.started_at.map(Timestamp::from_millis),
            completed_at: c.completed_at.map(Timestamp::from_millis),
            paused_at: c.paused_at.map(Timestamp::from_millis),
            next_batch_at: c.next_batch_at.map(Timestamp::from_millis),
            batch_size: c.batch_size.and_then(|n| u32::try_from(n).ok()),
            batch_interval_min: c.batch_interval_min.and_then(|n| u32::try_from(n).ok()),
            stop_reason: c.stop_reason.clone(),
            source_campaign_id: c.source_campaign_id,
            variables: variables_of(c),
            created_at: Timestamp::from_millis(c.created_at),
            updated_at: Timestamp::from_millis(c.updated_at),
            template: CampaignTemplate {
                id: detail.then_some(c.template_id),
                name: t.map(|t| t.name.clone()).unwrap_or_default(),
                category: t.map(|t| t.category).unwrap_or(TemplateCategory::Unknown),
                language: t.map(|t| t.language.clone()).unwrap_or_default(),
                body_text: t.filter(|_| detail).map(|t| t.body_text.clone()),
                status: t.filter(|_| detail).map(|t| t.status),
            },
            phone_number: CampaignPhoneNumber {
                id: detail.then_some(c.phone_number_id),
                number_e164: p.map(|p| p.number_e164.clone()).unwrap_or_default(),
                display_name: p.map(|p| p.display_name.clone()).unwrap_or_default(),
                quality_rating: p.filter(|_| detail).map(|p| p.quality_rating),
            },
            estimated_cost: None,
            real_cost: None,
            stats: counted.stats,
            errors_by_reason: None,
            last_replies: None,
        };
        if detail {
            v.real_cost = Some(Money(counted.cost_micros));
            add_detail(conn, c, &mut v).await?;
        }
        out.push(v);
    }
    Ok(out)
}

async fn add_detail(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    v: &mut Campaign,
) -> ApiResult<()> {
    let reasons = tallies::read(conn, Dim::RecipientFailure, &[c.id]).await?;
    let mut errors: Vec<ErrorByReason> = reasons
        .into_iter()
        .map(|r| ErrorByReason {
            reason: if r.key.is_empty() {
                "Unknown".into()
            } else {
                r.key
            },
            count: u64::try_from(r.n).unwrap_or(0),
        })
        .collect();
    errors.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
    v.errors_by_reason = Some(errors);
    // The last replies through the partial index of replied recipients.
    let replies = recipient::Entity::find()
        .filter(recipient::Column::CampaignId.eq(c.id))
        .filter(recipient::Column::Status.eq(RecipientStatus::Replied))
        .filter(recipient::Column::RepliedAt.is_not_null())
        .order_by_desc(recipient::Column::RepliedAt)
        .limit(5)
        .all(conn)
        .await?;
    let contacts = recipient_contacts(conn, &replies).await?;
    v.last_replies = Some(
        replies
            .iter()
            .map(|r| LastReply {
                contact: contact_of(&contacts, r),
                replied_at: Timestamp::from_millis(r.replied_at.unwrap_or(r.created_at)),
            })
            .collect(),
    );
    Ok(())
}

/// A recipient's contact as loaded, or (deleted since) its id and the number it was sent to.
fn contact_of(
    contacts: &HashMap<Uuid, RecipientContact>,
    r: &recipient::Model,
) -> RecipientContact {
    contacts
        .get(&r.contact_id)
        .cloned()
        .unwrap_or_else(|| RecipientContact {
            id: r.contact_id,
            full_name: None,
            // The number it was sent to (a business-scoped user id is no phone).
            primary_phone: Some(r.phone.clone()).filter(|p| p.starts_with('+')),
        })
}

/// The contacts of recipient rows, as a campaign shows them.
async fn recipient_contacts(
    conn: &impl ConnectionTrait,
    rows: &[recipient::Model],
) -> ApiResult<HashMap<Uuid, RecipientContact>> {
    let ids: Vec<Uuid> = rows.iter().map(|r| r.contact_id).collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(contact::Entity::find()
        .filter(contact::Column::Id.is_in(ids))
        .all(conn)
        .await?
        .into_iter()
        .map(|c| {
            (
                c.id,
                RecipientContact {
                    id: c.id,
                    full_name: c.full_name,
                    primary_phone: c.primary_phone,
                },
            )
        })
        .collect())
}

/// Builds wire recipients with their contacts, loaded for the whole batch in one query.
pub async fn load_recipients(
    conn: &impl ConnectionTrait,
    rows: Vec<recipient::Model>,
) -> ApiResult<Vec<Recipient>> {
    let contacts = recipient_contacts(conn, &rows).await?;
    Ok(rows
        .into_iter()
        .map(|r| Recipient {
            id: r.id,
            contact: contact_of(&contacts, &r),
            market: r.market,
            status: r.status,
            sent_at: r.sent_at.map(Timestamp::from_millis),
            delivered_at: r.delivered_at.map(Timestamp::from_millis),
            read_at: r.read_at.map(Timestamp::from_millis),
            failed_at: r.failed_at.map(Timestamp::from_millis),
            error_message: r.error_message,
            total_cost: Money(r.cost_micros),
            covered_by_allowance: r.covered_by_allowance,
        })
        .collect())
}
