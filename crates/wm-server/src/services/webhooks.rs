//! Webhook management and the delivery log (for API keys and the operator API alike).

use crate::db::Unique;
use std::net::IpAddr;

use axum::http::StatusCode;
use base64::Engine;
use rand::Rng;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, IntoActiveModel, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::webhooks::{MAX_WEBHOOKS, check_url, is_forbidden_ip};
use wm_types::PageQuery;
use wm_types::common::{Deleted, Page, PageMeta};
use wm_types::lookups::List;
use wm_types::webhooks::{
    CreateWebhook, Delivery, DeliveryStatus, UpdateWebhook, Webhook, WebhookCreated, WebhookStatus,
};

use crate::db::entities::webhook::events_to_db;
use crate::db::entities::{webhook, webhook_attempt, webhook_delivery};
use crate::db::tenant::{find_in_org, in_org};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::views::webhooks as webhook_views;

const NOT_FOUND: &str = "Webhook";

/// `whsec_` + 32 random bytes in base64.
fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// Checks a target URL: its form, and unless insecure targets are allowed, that every
/// address its host resolves to is public.
async fn check_target(state: &AppState, url: &str) -> ApiResult<()> {
    let insecure = state.settings.allow_insecure_webhooks;
    let target = check_url(url, insecure).map_err(ApiError::invalid)?;
    if insecure || target.host.parse::<IpAddr>().is_ok() {
        return Ok(());
    }
    let addrs: Vec<_> = tokio::net::lookup_host((target.host.as_str(), target.port))
        .await
        .map_err(|_| ApiError::invalid("url host could not be resolved"))?
        .collect();
    if addrs.is_empty() || addrs.iter().any(|a| is_forbidden_ip(a.ip())) {
        return Err(ApiError::invalid(
            "url must not point to a private, loopback or link-local address",
        ));
    }
    Ok(())
}

async fn load(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<webhook::Model> {
    find_in_org::<webhook::Entity>(org, id)
        .unique(&state.db.conn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

/// Creates a webhook; the answer is the only time its secret is shown.
pub async fn create(state: &AppState, org: Uuid, body: CreateWebhook) -> ApiResult<WebhookCreated> {
    check_target(state, &body.url).await?;
    let now = state.now_ms();
    let txn = state.db.write().await?;
    if in_org::<webhook::Entity>(org).count(&*txn).await? >= MAX_WEBHOOKS {
        return Err(ApiError::bad_request(format!(
            "An organization can have at most {MAX_WEBHOOKS} webhooks."
        )));
    }
    let secret = new_secret();
    let row = webhook::Entity::insert(webhook::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        url: Set(body.url.trim().to_owned()),
        events: Set(events_to_db(&body.events)),
        description: Set(body
            .description
            .map(|d| d.trim().to_owned())
            .filter(|d| !d.is_empty())),
        secret: Set(secret.clone()),
        status: Set(WebhookStatus::Active),
        consecutive_failures: Set(0),
        paused_at: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    })
    .exec_with_returning(&*txn)
    .await?;
    let answer = WebhookCreated {
        webhook: Webhook::from(row),
        secret,
    };
    crate::idempotency::seal(&txn, StatusCode::CREATED, &answer).await?;
    txn.commit().await?;
    Ok(answer)
}

/// The organisation's webhooks, oldest first.
pub async fn list(state: &AppState, org: Uuid) -> ApiResult<List<Webhook>> {
    let rows = in_org::<webhook::Entity>(org)
        .order_by_asc(webhook::Column::CreatedAt)
        .all(&state.db.conn)
        .await?;
    Ok(List {
        data: rows.into_iter().map(Webhook::from).collect(),
    })
}

/// One webhook.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Webhook> {
    Ok(Webhook::from(load(state, org, id).await?))
}

/// Changes a webhook; `status: ACTIVE` reactivates it (the failure count is reset only by
/// a successful delivery).
pub async fn update(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    patch: UpdateWebhook,
) -> ApiResult<Webhook> {
    if let Some(url) = &patch.url {
        check_target(state, url).await?;
    }
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let row = find_in_org::<webhook::Entity>(org, id)
        .unique(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    let current = row.status;
    let mut am = row.into_active_model();
    if let Some(url) = patch.url {
        am.url = Set(url.trim().to_owned());
    }
    if let Some(events) = patch.events {
        am.events = Set(events_to_db(&events));
    }
    if let Some(d) = patch.description {
        am.description = Set(d.map(|d| d.trim().to_owned()).filter(|d| !d.is_empty()));
    }
    match patch.status {
        Some(WebhookStatus::Active) if current != WebhookStatus::Active => {
            am.status = Set(WebhookStatus::Active);
            am.paused_at = Set(None);
        }
        Some(WebhookStatus::Paused) if current != WebhookStatus::Paused => {
            am.status = Set(WebhookStatus::Paused);
            am.paused_at = Set(Some(now));
        }
        _ => {}
    }
    am.updated_at = Set(now);
    let row = am.update(&*txn).await?;
    txn.commit().await?;
    Ok(Webhook::from(row))
}

/// Deletes a webhook with its delivery log.
pub async fn delete(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Deleted> {
    let txn = state.db.write().await?;
    find_in_org::<webhook::Entity>(org, id)
        .unique(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    let deliveries: Vec<Uuid> = webhook_delivery::Entity::find()
        .select_only()
        .column(webhook_delivery::Column::Id)
        .filter(webhook_delivery::Column::WebhookId.eq(id))
        .into_tuple()
        .all(&*txn)
        .await?;
    for chunk in deliveries.chunks(500) {
        webhook_attempt::Entity::delete_many()
            .filter(webhook_attempt::Column::DeliveryId.is_in(chunk.to_vec()))
            .exec(&*txn)
            .await?;
    }
    webhook_delivery::Entity::delete_many()
        .filter(webhook_delivery::Column::WebhookId.eq(id))
        .exec(&*txn)
        .await?;
    webhook::Entity::delete_by_id(id).exec(&*txn).await?;
    txn.commit().await?;
    Ok(Deleted { deleted: true })
}

/// The webhook's deliveries of the last 7 days, newest first, each with its attempts.
pub async fn deliveries(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    page: PageQuery,
) -> ApiResult<Page<Delivery>> {
    load(state, org, id).await?;
    let q =
        in_org::<webhook_delivery::Entity>(org).filter(webhook_delivery::Column::WebhookId.eq(id));
    let total = q.clone().count(&state.db.conn).await?;
    let rows = q
        .order_by_desc(webhook_delivery::Column::CreatedAt)
        .order_by_desc(webhook_delivery::Column::Id)
        .offset(crate::db::offset(page.page, page.page_size))
        .limit(page.page_size)
        .all(&state.db.conn)
        .await?;
    Ok(Page {
        data: webhook_views::load(&state.db.conn, rows).await?,
        meta: PageMeta::new(page.page, page.page_size, total),
    })
}

/// Schedules a failed delivery for an attempt now.
pub async fn retry(state: &AppState, org: Uuid, id: Uuid, delivery: Uuid) -> ApiResult<Delivery> {
    load(state, org, id).await?;
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let row = find_in_org::<webhook_delivery::Entity>(org, delivery)
        .filter(webhook_delivery::Column::WebhookId.eq(id))
        .one(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found("Delivery"))?;
    if row.status != DeliveryStatus::Failed {
        return Err(ApiError::business(
            StatusCode::BAD_REQUEST,
            None,
            "Only failed deliveries can be retried.",
        ));
    }
    let mut am = row.into_active_model();
    am.status = Set(DeliveryStatus::Pending);
    am.next_attempt_at = Set(Some(now));
    am.locked_until = Set(None);
    let row = am.update(&*txn).await?;
    let answer = webhook_views::load(&*txn, vec![row])
        .await?
        .pop()
        .ok_or_else(|| ApiError::not_found("Delivery"))?;
    crate::idempotency::seal(&txn, StatusCode::ACCEPTED, &answer).await?;
    txn.commit().await?;
    Ok(answer)
}
