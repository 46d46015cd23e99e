//! A campaign's audience: adding recipients (ids, tags, search, all) and listing them.

use sea_orm::sea_query::Query;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, EntityTrait, FromQueryResult, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::campaigns::{self as rules, AudienceSource, CampaignError};
use wm_core::messaging::{Ineligible, messageable};
use wm_core::phone::Phone;
use wm_core::pricing::RateCard;
use wm_types::campaigns::{
    Audience, AudienceResult, CampaignStatus, Recipient, RecipientContact, RecipientsQuery,
};
use wm_types::common::PageMeta;
use wm_types::enums::RecipientStatus;
use wm_types::{Money, Page, Timestamp};

use crate::db::entities::{contact, contact_tag, organization, recipient};
use crate::error::{ApiError, ApiResult};
use crate::services::sending;
use crate::state::AppState;

use super::view::recipient_contacts;
use super::{campaign_error, load, status_of};

/// `GET /campaigns/{id}/recipients`.
pub async fn recipients(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    q: &RecipientsQuery,
) -> ApiResult<Page<Recipient>> {
    let conn = &state.db.conn;
    load(conn, org, id).await?;
    let mut sel = recipient::Entity::find().filter(recipient::Column::CampaignId.eq(id));
    if let Some(statuses) = q.filter.and_then(crate::db::campaigns::filter_statuses) {
        sel = sel.filter(recipient::Column::Status.is_in(statuses));
    }
    let total = sel.clone().count(conn).await?;
    let (page, page_size) = (q.page.unwrap_or(1), q.page_size.unwrap_or(20));
    let rows = sel
        .order_by_asc(recipient::Column::CreatedAt)
        .order_by_asc(recipient::Column::Id)
        .offset(crate::db::offset(page, page_size))
        .limit(page_size)
        .all(conn)
        .await?;
    let contacts = recipient_contacts(conn, &rows).await?;
    let data = rows
        .into_iter()
        .map(|r| Recipient {
            id: r.id,
            contact: contacts
                .get(&r.contact_id)
                .cloned()
                .unwrap_or_else(|| RecipientContact {
                    id: r.contact_id,
                    full_name: None,
                    primary_phone: Some(r.phone.clone()),
                }),
            market: r.market,
            status: RecipientStatus::parse(&r.status).unwrap_or(RecipientStatus::Unknown),
            sent_at: r.sent_at.map(Timestamp::from_millis),
            delivered_at: r.delivered_at.map(Timestamp::from_millis),
            read_at: r.read_at.map(Timestamp::from_millis),
            failed_at: r.failed_at.map(Timestamp::from_millis),
            error_message: r.error_message,
            total_cost: Money(r.cost_micros),
            covered_by_allowance: r.covered_by_allowance,
        })
        .collect();
    Ok(Page {
        data,
        meta: PageMeta::new(page, page_size, total),
    })
}

#[derive(FromQueryResult)]
pub(super) struct AudienceRow {
    id: Uuid,
    primary_phone: Option<String>,
    opted_out: bool,
    consent_given: bool,
}

/// `POST /campaigns/{id}/recipients`: adds the eligible contacts of one source (consent
/// given, not opted out, with a phone); unpriceable ones are added and will fail uncharged.
pub async fn add_audience(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: Audience,
) -> ApiResult<AudienceResult> {
    let source = rules::audience_source(&body).map_err(ApiError::invalid)?;
    let c = load(&state.db.conn, org, id).await?;
    if !matches!(
        status_of(&c),
        CampaignStatus::Draft | CampaignStatus::Scheduled
    ) {
        return Err(campaign_error(CampaignError::InvalidState));
    }
    let conn = &state.db.conn;
    let select = || {
        contact::Entity::find()
            .select_only()
            .column(contact::Column::Id)
            .column(contact::Column::PrimaryPhone)
            .column(contact::Column::OptedOut)
            .column(contact::Column::ConsentGiven)
            .filter(contact::Column::OrganizationId.eq(org))
    };
    let matched: Vec<AudienceRow> = match source {
        AudienceSource::Contacts(ids) => {
            let mut ids = ids;
            ids.sort_unstable();
            ids.dedup();
            let mut rows = Vec::with_capacity(ids.len());
            for chunk in ids.chunks(1000) {
                rows.extend(
                    select()
                        .filter(contact::Column::Id.is_in(chunk.to_vec()))
                        .into_model::<AudienceRow>()
                        .all(conn)
                        .await?,
                );
            }
            rows
        }
        AudienceSource::Stage(stage) => {
            if crate::db::lookups::stage(conn, org, stage).await?.is_none() {
                return Err(ApiError::invalid(
                    "lifecycleStageId must be a lifecycle stage of this organization",
                ));
            }
            select()
                .filter(contact::Column::LifecycleStageId.eq(stage))
                .into_model::<AudienceRow>()
                .all(conn)
                .await?
        }
        AudienceSource::Tag(tag) => {
            select()
                .filter(
                    contact::Column::Id.in_subquery(
                        Query::select()
                            .column(contact_tag::Column::ContactId)
                            .from(contact_tag::Entity)
                            .and_where(contact_tag::Column::OrganizationId.eq(org))
                            .and_where(contact_tag::Column::TagKey.eq(wm_core::tags::tag_key(&tag)))
                            .to_owned(),
                    ),
                )
                .into_model::<AudienceRow>()
                .all(conn)
                .await?
        }
        AudienceSource::All => select().into_model::<AudienceRow>().all(conn).await?,
    };
    let mut result = AudienceResult {
        total: matched.len() as u64,
        ..Default::default()
    };
    let card = match organization::Entity::find_by_id(org).one(conn).await? {
        Some(o) => sending::rate_card(&o),
        None => RateCard::shipped().clone(),
    };
    let now = state.now_ms();
    let mut rows = Vec::new();
    for m in matched {
        let phone = match messageable(m.opted_out, m.consent_given, m.primary_phone) {
            Ok(phone) => phone,
            Err(Ineligible::NoPhone) => {
                result.without_phone += 1;
                continue;
            }
            Err(Ineligible::OptedOut | Ineligible::NoConsent) => {
                result.opted_out += 1;
                continue;
            }
        };
        let market = card
            .market_for(&Phone::from_stored(phone.clone()))
            .map(|r| r.market.clone());
        if market.is_none() {
            result.unpriceable += 1;
        }
        rows.push(recipient::ActiveModel {
            id: Set(Uuid::now_v7()),
            organization_id: Set(org),
            campaign_id: Set(c.id),
            contact_id: Set(m.id),
            phone: Set(phone),
            market: Set(market),
            status: Set(RecipientStatus::Pending.as_str().to_owned()),
            cost_micros: Set(0),
            covered_by_allowance: Set(false),
            queued_at: Set(None),
            provider_message_id: Set(None),
            sent_at: Set(None),
            delivered_at: Set(None),
            read_at: Set(None),
            replied_at: Set(None),
            failed_at: Set(None),
            error_message: Set(None),
            created_at: Set(now),
            attempt_at: Set(None),
            retry_at: Set(None),
            retries: Set(0),
        });
    }
    result.eligible = rows.len() as u64;
    let txn = state.db.write().await?;
    let c = load(&*txn, org, id).await?;
    if !matches!(
        status_of(&c),
        CampaignStatus::Draft | CampaignStatus::Scheduled
    ) {
        return Err(campaign_error(CampaignError::InvalidState));
    }
    let count = || {
        recipient::Entity::find()
            .filter(recipient::Column::CampaignId.eq(id))
            .count(&*txn)
    };
    let before = count().await?;
    for chunk in rows.chunks(1000) {
        recipient::Entity::insert_many(chunk.to_vec())
            .on_conflict_do_nothing_on([
                recipient::Column::CampaignId,
                recipient::Column::ContactId,
            ])
            .exec(&*txn)
            .await?;
    }
    let after = count().await?;
    txn.commit().await?;
    result.added = after - before;
    result.already_in = result.eligible - result.added;
    result.total_recipients = after;
    Ok(result)
}
