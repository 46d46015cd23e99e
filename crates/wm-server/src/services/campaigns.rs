//! Campaign use cases: create, list, detail, audience, cost preview, send, pause, resume,
//! duplicate. Every state change goes through `wm_core::campaigns::transition`.

use std::collections::{BTreeMap, HashMap};

use axum::http::StatusCode;
use sea_orm::sea_query::{Expr, Func, Query, SimpleExpr};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, EntityTrait, ExprTrait,
    FromQueryResult, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::campaigns::{self as rules, Action, AudienceSource, CampaignError, Facts, SendPlan};
use wm_core::messaging::{Ineligible, messageable};
use wm_core::phone::Phone;
use wm_core::pricing::{RateCard, allowance_covered};
use wm_core::templates;
use wm_types::campaigns::{
    Audience, AudienceResult, Campaign, CampaignList, CampaignPhoneNumber, CampaignStats,
    CampaignStatus, CampaignSummary, CampaignTab, CampaignTabs, CampaignTemplate, CostPreview,
    CreateCampaign, ErrorByReason, LastReply, ListCampaignsQuery, MarketCost, QualityRating,
    Recipient, RecipientContact, RecipientsQuery, SendCampaign, TemplateCategory, TemplateStatus,
    WalletPreview,
};
use wm_types::common::PageMeta;
use wm_types::enums::ErrorCode;
use wm_types::enums::RecipientStatus;
use wm_types::{Money, Page, Timestamp};

use crate::db::entities::{
    campaign, contact, contact_tag, organization, phone_number, recipient, template,
};
use crate::db::tenant::{find_in_org, in_org};
use crate::error::{ApiError, ApiResult};
use crate::services::{sending, wallet};
use crate::state::AppState;

const NOT_FOUND: &str = "Campaign";
const DAY_MS: i64 = 86_400_000;

/// A campaign error as the API answers it: 400, the spec's message, a code when it has one.
pub fn campaign_error(e: CampaignError) -> ApiError {
    match e.code() {
        Some(code) => ApiError::business(StatusCode::BAD_REQUEST, Some(code), e.message()),
        None => ApiError::bad_request(e.message()),
    }
}

async fn load(conn: &impl ConnectionTrait, org: Uuid, id: Uuid) -> ApiResult<campaign::Model> {
    find_in_org::<campaign::Entity>(org, id)
        .one(conn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

fn status_of(c: &campaign::Model) -> CampaignStatus {
    CampaignStatus::parse(&c.status).unwrap_or(CampaignStatus::Unknown)
}

fn variables_of(c: &campaign::Model) -> serde_json::Map<String, serde_json::Value> {
    serde_json::from_str(&c.variables).unwrap_or_default()
}

/// Builds wire campaigns, loading templates, numbers and stats in one query each.
async fn views(
    conn: &impl ConnectionTrait,
    rows: &[campaign::Model],
    detail_at: Option<i64>,
) -> ApiResult<Vec<Campaign>> {
    let detail = detail_at.is_some();
    let ids: Vec<Uuid> = rows.iter().map(|c| c.id).collect();
    let tids: Vec<Uuid> = rows.iter().map(|c| c.template_id).collect();
    let pids: Vec<Uuid> = rows.iter().map(|c| c.phone_number_id).collect();
    let templates: HashMap<Uuid, template::Model> = template::Entity::find()
        .filter(template::Column::Id.is_in(tids))
        .all(conn)
        .await?
        .into_iter()
        .map(|t| (t.id, t))
        .collect();
    let numbers: HashMap<Uuid, phone_number::Model> = phone_number::Entity::find()
        .filter(phone_number::Column::Id.is_in(pids))
        .all(conn)
        .await?
        .into_iter()
        .map(|p| (p.id, p))
        .collect();
    let mut stats = crate::db::campaigns::stats(conn, ids).await?;
    let mut out = Vec::with_capacity(rows.len());
    for c in rows {
        let t = templates.get(&c.template_id);
        let p = numbers.get(&c.phone_number_id);
        let mut v = Campaign {
            id: c.id,
            organization_id: c.organization_id,
            phone_number_id: c.phone_number_id,
            template_id: c.template_id,
            name: c.name.clone(),
            status: status_of(c),
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
                category: t
                    .and_then(|t| TemplateCategory::parse(&t.category))
                    .unwrap_or(TemplateCategory::Unknown),
                language: t.map(|t| t.language.clone()).unwrap_or_default(),
                body_text: t.filter(|_| detail).map(|t| t.body_text.clone()),
                status: t
                    .filter(|_| detail)
                    .and_then(|t| TemplateStatus::parse(&t.status)),
            },
            phone_number: CampaignPhoneNumber {
                id: detail.then_some(c.phone_number_id),
                number_e164: p.map(|p| p.number_e164.clone()).unwrap_or_default(),
                display_name: p.map(|p| p.display_name.clone()).unwrap_or_default(),
                quality_rating: p
                    .filter(|_| detail)
                    .and_then(|p| QualityRating::parse(&p.quality_rating)),
            },
            estimated_cost: None,
            real_cost: None,
            stats: stats.remove(&c.id).unwrap_or_default(),
            errors_by_reason: None,
            last_replies: None,
        };
        if let Some(now) = detail_at {
            add_detail(conn, c, &mut v, now).await?;
        }
        out.push(v);
    }
    Ok(out)
}

#[derive(FromQueryResult)]
struct ReasonCount {
    reason: Option<String>,
    n: i64,
}

#[derive(FromQueryResult)]
struct Sum {
    total: Option<i64>,
}

/// `SUM(cost_micros)` as a BIGINT (PostgreSQL sums a bigint into a numeric).
fn sum_micros() -> SimpleExpr {
    Func::cast_as(
        Func::sum(Expr::col(recipient::Column::CostMicros)),
        "BIGINT",
    )
    .into()
}

async fn add_detail(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    v: &mut Campaign,
    now: i64,
) -> ApiResult<()> {
    let (batch, cost) = sending::price_next_batch(conn, c, None, now).await?;
    v.estimated_cost = Some((!batch.is_empty() || v.stats.total > 0).then_some(cost.total));
    let real = recipient::Entity::find()
        .select_only()
        .column_as(sum_micros(), "total")
        .filter(recipient::Column::CampaignId.eq(c.id))
        .into_model::<Sum>()
        .one(conn)
        .await?
        .and_then(|s| s.total)
        .unwrap_or(0);
    v.real_cost = Some(Money(real));
    let reasons = recipient::Entity::find()
        .select_only()
        .column_as(recipient::Column::ErrorMessage, "reason")
        .column_as(
            SimpleExpr::from(Func::count(Expr::col(recipient::Column::Id))),
            "n",
        )
        .filter(recipient::Column::CampaignId.eq(c.id))
        .filter(recipient::Column::Status.eq(RecipientStatus::Failed.as_str()))
        .group_by(recipient::Column::ErrorMessage)
        .into_model::<ReasonCount>()
        .all(conn)
        .await?;
    let mut errors: Vec<ErrorByReason> = reasons
        .into_iter()
        .map(|r| ErrorByReason {
            reason: r.reason.unwrap_or_else(|| "Unknown".into()),
            count: u64::try_from(r.n).unwrap_or(0),
        })
        .collect();
    errors.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
    v.errors_by_reason = Some(errors);
    let replies = recipient::Entity::find()
        .filter(recipient::Column::CampaignId.eq(c.id))
        .filter(recipient::Column::Status.eq(RecipientStatus::Replied.as_str()))
        .order_by_desc(recipient::Column::RepliedAt)
        .limit(5)
        .all(conn)
        .await?;
    let contacts = recipient_contacts(conn, &replies).await?;
    v.last_replies = Some(
        replies
            .iter()
            .map(|r| LastReply {
                contact: contacts
                    .get(&r.contact_id)
                    .cloned()
                    .unwrap_or_else(|| RecipientContact {
                        id: r.contact_id,
                        full_name: None,
                        primary_phone: Some(r.phone.clone()),
                    }),
                replied_at: Timestamp::from_millis(r.replied_at.unwrap_or(r.created_at)),
            })
            .collect(),
    );
    Ok(())
}

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

async fn detail(state: &AppState, c: &campaign::Model) -> ApiResult<Campaign> {
    views(
        &state.db.conn,
        std::slice::from_ref(c),
        Some(state.now_ms()),
    )
    .await?
    .pop()
    .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

/// `GET /campaigns/{id}`.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Campaign> {
    let c = load(&state.db.conn, org, id).await?;
    detail(state, &c).await
}

/// `POST /campaigns`: a DRAFT with a sender number and an APPROVED template of the
/// organisation, and variables that name template positions.
pub async fn create(state: &AppState, org: Uuid, body: CreateCampaign) -> ApiResult<Campaign> {
    let conn = &state.db.conn;
    if find_in_org::<phone_number::Entity>(org, body.phone_number_id)
        .one(conn)
        .await?
        .is_none()
    {
        return Err(ApiError::business(
            StatusCode::CONFLICT,
            Some(ErrorCode::PhoneNumberNotOwned),
            "The sender phone number does not belong to this organization.",
        ));
    }
    let t = find_in_org::<template::Entity>(org, body.template_id)
        .one(conn)
        .await?
        .filter(|t| t.status == TemplateStatus::Approved.as_str())
        .ok_or_else(|| {
            ApiError::invalid("templateId must be an APPROVED template of this organization")
        })?;
    let vars = body.variables.unwrap_or_default();
    templates::parse_variables(&vars, &templates::positions(&t.body_text))
        .map_err(ApiError::Validation)?;
    let now = state.now_ms();
    let row = campaign::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        name: Set(body.name.trim().to_owned()),
        phone_number_id: Set(body.phone_number_id),
        template_id: Set(body.template_id),
        status: Set(CampaignStatus::Draft.as_str().to_owned()),
        variables: Set(serde_json::Value::Object(vars).to_string()),
        scheduled_at: Set(body.scheduled_at.map(|t| t.millis())),
        started_at: Set(None),
        completed_at: Set(None),
        paused_at: Set(None),
        next_batch_at: Set(None),
        batch_size: Set(None),
        batch_interval_min: Set(None),
        stop_reason: Set(None),
        source_campaign_id: Set(None),
        locked_until: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    };
    let txn = state.db.write().await?;
    let row = campaign::Entity::insert(row)
        .exec_with_returning(&*txn)
        .await?;
    txn.commit().await?;
    detail(state, &row).await
}

/// `POST /campaigns/{id}/duplicate`: a new DRAFT with the same number, template and
/// variables (no recipients), pointing back to its source.
pub async fn duplicate(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Campaign> {
    let src = load(&state.db.conn, org, id).await?;
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let row = campaign::Entity::insert(campaign::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        name: Set(format!("{} (copy)", src.name)),
        phone_number_id: Set(src.phone_number_id),
        template_id: Set(src.template_id),
        status: Set(CampaignStatus::Draft.as_str().to_owned()),
        variables: Set(src.variables.clone()),
        scheduled_at: Set(None),
        started_at: Set(None),
        completed_at: Set(None),
        paused_at: Set(None),
        next_batch_at: Set(None),
        batch_size: Set(None),
        batch_interval_min: Set(None),
        stop_reason: Set(None),
        source_campaign_id: Set(Some(src.id)),
        locked_until: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    })
    .exec_with_returning(&*txn)
    .await?;
    txn.commit().await?;
    detail(state, &row).await
}

fn tab_condition(org: Uuid, tab: CampaignTab) -> Condition {
    use CampaignStatus as S;
    let statuses = |v: &[S]| {
        Condition::all().add(campaign::Column::Status.is_in(v.iter().map(|s| s.as_str())))
    };
    match tab {
        CampaignTab::Sending => statuses(&[S::Sending, S::Paused]),
        CampaignTab::Scheduled => statuses(&[S::Scheduled]),
        CampaignTab::Drafts => statuses(&[S::Draft]),
        CampaignTab::Finished => statuses(&[S::Completed]),
        CampaignTab::Errors => Condition::any()
            .add(campaign::Column::StopReason.is_not_null())
            .add(
                campaign::Column::Id.in_subquery(
                    Query::select()
                        .column(recipient::Column::CampaignId)
                        .from(recipient::Entity)
                        .and_where(recipient::Column::OrganizationId.eq(org))
                        .and_where(recipient::Column::Status.eq(RecipientStatus::Failed.as_str()))
                        .to_owned(),
                ),
            ),
        CampaignTab::All => Condition::all(),
    }
}

fn filters(org: Uuid, q: &ListCampaignsQuery, now: i64) -> Condition {
    let mut c = Condition::all().add(campaign::Column::OrganizationId.eq(org));
    if let Some(cat) = q.category {
        c = c.add(
            campaign::Column::TemplateId.in_subquery(
                Query::select()
                    .column(template::Column::Id)
                    .from(template::Entity)
                    .and_where(template::Column::OrganizationId.eq(org))
                    .and_where(template::Column::Category.eq(cat.as_str()))
                    .to_owned(),
            ),
        );
    }
    if let Some(p) = q.phone_number_id {
        c = c.add(campaign::Column::PhoneNumberId.eq(p));
    }
    if let Some(text) = q.q.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        c = c.add(
            Expr::expr(Func::lower(Expr::col(campaign::Column::Name)))
                .like(crate::db::like_contains(text)),
        );
    }
    if let Some(days) = q.days {
        c = c.add(campaign::Column::CreatedAt.gte(now - i64::from(days) * DAY_MS));
    }
    c
}

/// `GET /campaigns`: newest first, with tab counts under the other filters and a summary of
/// the campaigns created in the last `days` (30 by default).
pub async fn list(state: &AppState, org: Uuid, q: &ListCampaignsQuery) -> ApiResult<CampaignList> {
    let conn = &state.db.conn;
    let now = state.now_ms();
    let base = filters(org, q, now);
    let count = |tab: CampaignTab| {
        let base = base.clone();
        async move {
            campaign::Entity::find()
                .filter(base)
                .filter(tab_condition(org, tab))
                .count(conn)
                .await
        }
    };
    let tabs = CampaignTabs {
        all: count(CampaignTab::All).await?,
        sending: count(CampaignTab::Sending).await?,
        scheduled: count(CampaignTab::Scheduled).await?,
        drafts: count(CampaignTab::Drafts).await?,
        errors: count(CampaignTab::Errors).await?,
        finished: count(CampaignTab::Finished).await?,
    };
    let tab = q.tab.unwrap_or_default();
    let total = match tab {
        CampaignTab::All => tabs.all,
        CampaignTab::Sending => tabs.sending,
        CampaignTab::Scheduled => tabs.scheduled,
        CampaignTab::Drafts => tabs.drafts,
        CampaignTab::Errors => tabs.errors,
        CampaignTab::Finished => tabs.finished,
    };
    let (page, page_size) = (q.page.unwrap_or(1), q.page_size.unwrap_or(20));
    let rows = campaign::Entity::find()
        .filter(base)
        .filter(tab_condition(org, tab))
        .order_by_desc(campaign::Column::CreatedAt)
        .order_by_desc(campaign::Column::Id)
        .offset(crate::db::offset(page, page_size))
        .limit(page_size)
        .all(conn)
        .await?;
    let data = views(conn, &rows, None).await?;
    let summary = summary(state, org, q.days.unwrap_or(30), now).await?;
    Ok(CampaignList {
        data,
        meta: PageMeta::new(page, page_size, total),
        tabs,
        summary,
    })
}

async fn summary(state: &AppState, org: Uuid, days: u32, now: i64) -> ApiResult<CampaignSummary> {
    let conn = &state.db.conn;
    let since = now - i64::from(days) * DAY_MS;
    let ids: Vec<Uuid> = in_org::<campaign::Entity>(org)
        .select_only()
        .column(campaign::Column::Id)
        .filter(campaign::Column::CreatedAt.gte(since))
        .into_tuple()
        .all(conn)
        .await?;
    let mut funnel = CampaignStats::default();
    for chunk in ids.chunks(500) {
        for s in crate::db::campaigns::stats(conn, chunk.to_vec())
            .await?
            .into_values()
        {
            funnel.sent += s.sent;
            funnel.delivered += s.delivered;
            funnel.read += s.read;
            funnel.replied += s.replied;
        }
    }
    let spend = recipient::Entity::find()
        .select_only()
        .column_as(sum_micros(), "total")
        .filter(recipient::Column::OrganizationId.eq(org))
        .filter(
            recipient::Column::CampaignId.in_subquery(
                Query::select()
                    .column(campaign::Column::Id)
                    .from(campaign::Entity)
                    .and_where(campaign::Column::OrganizationId.eq(org))
                    .and_where(campaign::Column::CreatedAt.gte(since))
                    .to_owned(),
            ),
        )
        .into_model::<Sum>()
        .one(conn)
        .await?
        .and_then(|s| s.total)
        .unwrap_or(0);
    let pct = |n: u64| {
        if funnel.sent == 0 {
            0.0
        } else {
            (n as f64 * 1000.0 / funnel.sent as f64).round() / 10.0
        }
    };
    Ok(CampaignSummary {
        days,
        since: Timestamp::from_millis(since).0.date_naive().to_string(),
        campaigns: ids.len() as u64,
        sent: funnel.sent,
        delivered_pct: pct(funnel.delivered),
        read_pct: pct(funnel.read),
        replies: funnel.replied,
        replies_pct: pct(funnel.replied),
        spend: Money(spend),
        spend_per_message: Money(if funnel.sent == 0 {
            0
        } else {
            spend / i64::try_from(funnel.sent).unwrap_or(1)
        }),
    })
}

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
struct AudienceRow {
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

/// `GET /campaigns/{id}/preview-cost`: the cost of the pending recipients per market, the
/// wallet after it, and the included UTILITY messages left.
pub async fn preview_cost(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<CostPreview> {
    let conn = &state.db.conn;
    let c = load(conn, org, id).await?;
    let o = organization::Entity::find_by_id(org)
        .one(conn)
        .await?
        .ok_or_else(|| ApiError::not_found("Organization"))?;
    let now = state.now_ms();
    let (batch, cost) = sending::price_next_batch(conn, &c, None, now).await?;
    let cat = sending::category(conn, &c).await?;
    let card = sending::rate_card(&o);
    let price_of: HashMap<Uuid, (i64, bool)> = cost
        .priced
        .iter()
        .map(|(id, p, cov)| (*id, (*p, *cov)))
        .collect();
    let mut markets: BTreeMap<String, MarketCost> = BTreeMap::new();
    for r in &batch {
        let (Some(code), Some((price, _))) = (r.market.as_deref(), price_of.get(&r.id)) else {
            continue;
        };
        let Some(rate) = card.market(code) else {
            continue;
        };
        let m = markets
            .entry(code.to_owned())
            .or_insert_with(|| MarketCost {
                market: code.to_owned(),
                label: rate.label.clone(),
                recipient_count: 0,
                total_cost: rate.price(cat),
                subtotal: Money(0),
                rate_effective_from: rate.effective_from.to_string(),
            });
        m.recipient_count += 1;
        m.subtotal.0 += price;
    }
    let balance = wallet::balance(conn, org).await?;
    let included = u64::try_from(o.included_utility_messages).unwrap_or(0);
    let used = sending::allowance_used(conn, org, now).await?;
    Ok(CostPreview {
        currency: o.currency,
        recipient_count: batch.len() as u64,
        priceable_count: cost.priced.len() as u64,
        unpriceable_count: cost.unpriceable.len() as u64,
        estimated_total: cost.total,
        by_market: markets.into_values().collect(),
        wallet: WalletPreview {
            balance,
            after_send: Money(balance.0 - cost.total.0),
            sufficient: balance.0 >= cost.total.0,
        },
        included_utility_remaining: (cat == TemplateCategory::Utility)
            .then(|| allowance_covered(included, used, included)),
    })
}

async fn facts(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    batch: Option<u64>,
    now: i64,
) -> ApiResult<Facts> {
    let recipients = recipient::Entity::find()
        .filter(recipient::Column::CampaignId.eq(c.id))
        .count(conn)
        .await?;
    let t = template::Entity::find_by_id(c.template_id)
        .one(conn)
        .await?;
    let positions = t
        .map(|t| templates::positions(&t.body_text))
        .unwrap_or_default();
    let vars = templates::parse_variables(&variables_of(c), &positions).unwrap_or_default();
    let (_, cost) = sending::price_next_batch(conn, c, batch, now).await?;
    let balance = wallet::balance(conn, c.organization_id).await?;
    Ok(Facts {
        recipients,
        missing_variables: templates::missing(&positions, &vars),
        balance_covers_next_batch: balance.0 >= cost.total.0,
        stop_reason: c.stop_reason.clone(),
    })
}

/// `POST /campaigns/{id}/send`: `now` charges everything and queues it before answering;
/// `scheduled` stores the start; `staggered` charges and queues the first batch (or
/// schedules it). A failed send changes neither the campaign nor the wallet.
pub async fn send(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: SendCampaign,
) -> ApiResult<Campaign> {
    let now = state.now_ms();
    let plan = rules::send_plan(&body, Timestamp::from_millis(now).0).map_err(campaign_error)?;
    let txn = state.db.write().await?;
    let c = load(&*txn, org, id).await?;
    let limit = match &plan {
        SendPlan::Staggered { batch_size, .. } => Some(u64::from(*batch_size)),
        _ => None,
    };
    let f = facts(&*txn, &c, limit, now).await?;
    let t = rules::transition(status_of(&c), &Action::Send(plan.clone()), &f)
        .map_err(campaign_error)?;
    let mut upd = sending::transition_update(c.id, &[status_of(&c)], &t, now);
    let (start, size, interval) = match plan {
        SendPlan::Now => (None, None, None),
        SendPlan::Scheduled { at } => (Some(at.timestamp_millis()), None, None),
        SendPlan::Staggered {
            start,
            batch_size,
            interval_min,
        } => (
            start.map(|s| s.timestamp_millis()),
            Some(batch_size as i32),
            Some(interval_min as i32),
        ),
    };
    upd = upd
        .col_expr(campaign::Column::BatchSize, Expr::val(size))
        .col_expr(campaign::Column::BatchIntervalMin, Expr::val(interval));
    if t.to == CampaignStatus::Scheduled {
        upd = upd
            .col_expr(campaign::Column::ScheduledAt, Expr::val(start))
            .col_expr(campaign::Column::NextBatchAt, Expr::val(start));
    } else {
        let next = sending::next_batch_at(interval, now);
        upd = upd
            .col_expr(campaign::Column::StartedAt, Expr::val(now))
            .col_expr(campaign::Column::NextBatchAt, Expr::val(next));
    }
    // Conditional on the status read above: of two concurrent sends, one wins.
    if upd.exec(&*txn).await?.rows_affected == 0 {
        return Err(campaign_error(CampaignError::InvalidState));
    }
    if t.send_batch_now
        && sending::charge_next_batch(&*txn, &c, size.map(|n| n as u64), now).await?
            == sending::Charge::Insufficient
    {
        return Err(campaign_error(CampaignError::InsufficientBalance));
    }
    txn.commit().await?;
    state.wake_campaigns();
    get(state, org, id).await
}

/// `POST /campaigns/{id}/pause`: only a sending campaign; queued messages wait, sent ones
/// are not recalled; `stopReason` stays null.
pub async fn pause(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Campaign> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let c = load(&*txn, org, id).await?;
    let f = Facts {
        recipients: 0,
        missing_variables: Vec::new(),
        balance_covers_next_batch: true,
        stop_reason: c.stop_reason.clone(),
    };
    let t = rules::transition(status_of(&c), &Action::Pause, &f).map_err(campaign_error)?;
    let done = sending::transition_update(c.id, &[status_of(&c)], &t, now)
        .exec(&*txn)
        .await?;
    if done.rows_affected == 0 {
        return Err(campaign_error(CampaignError::NotSending));
    }
    txn.commit().await?;
    get(state, org, id).await
}

/// `POST /campaigns/{id}/resume`: continues where it left off; a campaign paused for its
/// balance resumes only once the wallet covers the next batch (400 otherwise, still paused).
pub async fn resume(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Campaign> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let c = load(&*txn, org, id).await?;
    let limit = sending::batch_limit(&c);
    let mut f = facts(&*txn, &c, limit, now).await?;
    // A batch charged before the pause goes out first; the next one is charged at its
    // time (and pauses the campaign again then if the wallet cannot pay it).
    let paid_batch_waiting = sending::paid_batch_waiting(&*txn, c.id).await?;
    if paid_batch_waiting {
        f.balance_covers_next_batch = true;
    }
    let t = rules::transition(status_of(&c), &Action::Resume, &f).map_err(campaign_error)?;
    let next = sending::next_batch_at(c.batch_interval_min, now);
    let done = sending::transition_update(c.id, &[status_of(&c)], &t, now)
        .col_expr(campaign::Column::NextBatchAt, Expr::val(next))
        .exec(&*txn)
        .await?;
    if done.rows_affected == 0 {
        return Err(campaign_error(CampaignError::NotPaused));
    }
    if t.send_batch_now
        && !paid_batch_waiting
        && sending::charge_next_batch(&*txn, &c, limit, now).await? == sending::Charge::Insufficient
    {
        return Err(campaign_error(CampaignError::InsufficientBalance));
    }
    txn.commit().await?;
    state.wake_campaigns();
    get(state, org, id).await
}
