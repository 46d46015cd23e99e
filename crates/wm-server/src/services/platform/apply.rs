//! Applying kept platform webhooks: each parsed, its events applied to the organisation its
//! account belongs to, marked processed, or kept aside as unapplied.

use crate::db::entities::{campaign, phone_number, platform_event, template};
use crate::services::contacts::platform::On;
use crate::services::inbound::{self, At, people};
use crate::services::outbound::status as statuses;
use crate::services::sending;
use crate::state::AppState;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};
use uuid::Uuid;
use wm_core::campaigns::{Action, Facts, transition};
use wm_core::platform::PlatformEvent;
use wm_types::campaigns::CampaignStatus;

/// How long a worker holds an event it is applying; an event whose application failed is
/// tried again when this lapses.
pub const CLAIM_MS: i64 = 15_000;

/// How long an event that keeps failing is retried: the platform's own redelivery horizon
/// and the retention of what [`purge`] forgets (7 days).
pub(super) const GIVE_UP_MS: i64 = 7 * 24 * 3_600_000;

/// A kept webhook, read.
pub(crate) enum Parsed {
    /// Its events, with the name of the platform that sent them.
    Events(&'static str, Vec<PlatformEvent>),
    /// Not readable (logged): done with, as nothing can come of it.
    Unreadable,
}

/// Reads a kept webhook with its platform's intake.
pub(crate) fn parse(state: &AppState, row: &platform_event::Model) -> Parsed {
    let parsed = match state.registry.intake(&row.provider) {
        Some(intake) => intake
            .parse(row.payload.as_bytes())
            .map(|events| (intake.name(), events)),
        None => Err(format!(
            "no platform named {:?} is configured",
            row.provider
        )),
    };
    match parsed {
        Ok((provider, events)) => Parsed::Events(provider, events),
        Err(e) => {
            tracing::warn!(event = %row.id, error = %e, "a platform webhook could not be read");
            Parsed::Unreadable
        }
    }
}

/// Applies one claimed webhook on its own and marks it done; `false` when it failed and
/// is left claimed, to be applied again once the claim lapses (what was applied already
/// is not applied twice), until the platform itself has stopped redelivering.
pub(crate) async fn apply_claimed(
    state: &AppState,
    row: &platform_event::Model,
    parsed: Parsed,
) -> anyhow::Result<bool> {
    let applied = match parsed {
        Parsed::Events(provider, events) => apply_events(state, provider, row.id, events).await,
        Parsed::Unreadable => Ok(()),
    };
    if let Err(e) = applied {
        if row.received_at > state.now_ms() - GIVE_UP_MS {
            tracing::warn!(event = %row.id, error = %format!("{e:#}"), "a platform webhook was not applied; it is retried");
            return Ok(false);
        }
        tracing::error!(event = %row.id, error = %format!("{e:#}"), "a platform webhook could not be applied for days; given up");
    }
    mark_processed(&state.db.conn, [row.id], state.now_ms()).await?;
    Ok(true)
}

/// Marks kept webhooks applied.
pub(crate) async fn mark_processed(
    conn: &impl ConnectionTrait,
    ids: impl IntoIterator<Item = Uuid>,
    now: i64,
) -> Result<(), sea_orm::DbErr> {
    let ids: Vec<Uuid> = ids.into_iter().collect();
    for chunk in ids.chunks(500) {
        platform_event::Entity::update_many()
            .col_expr(platform_event::Column::ProcessedAt, Expr::val(now))
            .filter(platform_event::Column::Id.is_in(chunk.to_vec()))
            .exec(conn)
            .await?;
    }
    Ok(())
}

pub(super) async fn apply_events(
    state: &AppState,
    provider: &'static str,
    event_id: Uuid,
    events: Vec<PlatformEvent>,
) -> anyhow::Result<()> {
    for e in events {
        apply_event(state, provider, event_id, e).await?;
    }
    Ok(())
}

/// Keeps a part that cannot be applied (its own transaction).
pub(super) async fn keep_unapplied(
    state: &AppState,
    provider: &'static str,
    event_id: Uuid,
    u: &wm_core::platform::Unapplied,
) -> anyhow::Result<()> {
    let txn = state.db.write().await?;
    super::unapplied::record(&*txn, provider, Some(event_id), u, state.now_ms()).await?;
    txn.commit().await?;
    Ok(())
}

/// The sender number the platform means by its phone number id.
pub(crate) async fn number_by_platform_id(
    conn: &impl ConnectionTrait,
    platform_id: &str,
) -> Result<Option<phone_number::Model>, sea_orm::DbErr> {
    phone_number::Entity::find()
        .filter(phone_number::Column::PlatformPhoneNumberId.eq(platform_id))
        .one(conn)
        .await
}

pub(super) async fn apply_event(
    state: &AppState,
    provider: &'static str,
    event_id: Uuid,
    e: PlatformEvent,
) -> anyhow::Result<()> {
    if let PlatformEvent::Unapplied(u) = &e {
        return keep_unapplied(state, provider, event_id, u).await;
    }
    if let Some(id) = e.account() {
        // An event of one business account (a number, a Page, an Instagram account) is its
        // organisation's; one of an account that is not ours is acknowledged, and kept as
        // not applied.
        let Some(endpoint) = endpoint(&state.db.conn, provider, id).await? else {
            let u = wm_core::platform::Unapplied::new(
                Some(id),
                super::unapplied::UNKNOWN_ACCOUNT,
                &format!("{e:?}"),
            );
            return keep_unapplied(state, provider, event_id, &u).await;
        };
        return apply_to_org(state, provider, endpoint, e).await;
    }
    match e {
        PlatformEvent::TemplateStatus {
            business_account: waba_id,
            name,
            language,
            new_status: Some(status),
            stop_reason,
            ..
        } => template_status(state, &waba_id, &name, &language, &status, stop_reason).await?,
        PlatformEvent::Quality {
            business_account: waba_id,
            display_phone_number,
            rating,
            ..
        } => {
            let Some(rating) = rating else { return Ok(()) };
            let digits: String = display_phone_number
                .chars()
                .filter(char::is_ascii_digit)
                .collect();
            let txn = state.db.write().await?;
            phone_number::Entity::update_many()
                .col_expr(phone_number::Column::QualityRating, Expr::val(rating))
                .filter(phone_number::Column::WabaId.eq(waba_id))
                .filter(phone_number::Column::NumberE164.eq(format!("+{digits}")))
                .exec(&*txn)
                .await?;
            txn.commit().await?;
        }
        _ => {}
    }
    Ok(())
}

/// The organisation's account a platform id names, for `provider`.
pub(crate) struct Endpoint {
    /// Its organisation.
    pub org: Uuid,
    /// The account's row.
    pub at: At,
}

/// The account `provider`'s platform means by `id`: a connected channel of that provider
/// (a Page, an Instagram account), else a business number with that platform id.
pub(crate) async fn endpoint(
    conn: &impl ConnectionTrait,
    provider: &str,
    id: &str,
) -> Result<Option<Endpoint>, sea_orm::DbErr> {
    if let Some(ch) = crate::db::channels::by_account(conn, provider, id).await? {
        return Ok(Some(Endpoint {
            org: ch.organization_id,
            at: At::Channel(ch.id),
        }));
    }
    Ok(number_by_platform_id(conn, id).await?.map(|n| Endpoint {
        org: n.organization_id,
        at: At::Number(n.id),
    }))
}

/// An event of one of an organisation's accounts.
pub(super) async fn apply_to_org(
    state: &AppState,
    provider: &'static str,
    endpoint: Endpoint,
    e: PlatformEvent,
) -> anyhow::Result<()> {
    let org = endpoint.org;
    let Some(p) = state.registry.named(provider).cloned() else {
        anyhow::bail!("no provider named {provider} runs here");
    };
    let on = On::of(p.descriptor);
    match e {
        PlatformEvent::Status { update, .. } => {
            let txn = state.db.write().await?;
            statuses::apply(&*txn, Some(org), &update, state.now_ms()).await?;
            txn.commit().await?;
            // Whoever watches that person's thread sees the status move.
            if let Some(m) = crate::db::messages::by_platform_id(
                &state.db.conn,
                org,
                &update.provider_message_id,
            )
            .await?
            {
                state.db.ring(m.contact_id).await;
            }
        }
        PlatformEvent::Inbound(m) => {
            let id = m.message_id.clone();
            inbound::platform_message(state, org, &p, endpoint.at, *m)
                .await
                .map_err(|e| anyhow::anyhow!("inbound message {id}: {e}"))?;
        }
        PlatformEvent::NumberChanged {
            account,
            message_id,
            from,
            to,
            user_id,
        } => {
            let key = inbound::seen::Key {
                provider,
                account: &account,
                message_id: &message_id,
            };
            people::number_changed(state, org, on, key, &from, &to, user_id.as_deref())
                .await
                .map_err(|e| anyhow::anyhow!("number change {message_id}: {e}"))?;
        }
        PlatformEvent::UserIdChanged {
            person,
            previous,
            current,
            parent,
            ..
        } => {
            people::user_id_changed(
                state,
                org,
                on,
                &person,
                crate::services::contacts::platform::IdChange {
                    previous: &previous,
                    current: &current,
                    parent: parent.as_deref(),
                },
            )
            .await
            .map_err(|e| anyhow::anyhow!("user id change: {e}"))?;
        }
        PlatformEvent::Preference { person, stop, .. } => {
            people::marketing_preference(state, org, on, &person, stop)
                .await
                .map_err(|e| anyhow::anyhow!("marketing preference: {e}"))?;
        }
        PlatformEvent::Echo(m) => {
            let id = m.message_id.clone();
            inbound::echo::apply(state, org, &p, endpoint.at, *m)
                .await
                .map_err(|e| anyhow::anyhow!("echo {id}: {e}"))?;
        }
        PlatformEvent::Watermark {
            person,
            status,
            upto_ms,
            message_ids,
            ..
        } => {
            let mark = inbound::echo::Watermark {
                status,
                upto_ms,
                message_ids: &message_ids,
            };
            inbound::echo::watermark(state, org, on, endpoint.at, &person, mark)
                .await
                .map_err(|e| anyhow::anyhow!("watermark: {e}"))?;
        }
        PlatformEvent::TemplateStatus { .. }
        | PlatformEvent::Quality { .. }
        | PlatformEvent::Unapplied(_) => {}
    }
    Ok(())
}

/// A template's status changed at the platform: stored on every organisation's copy (the
/// organisations whose numbers belong to that WABA); a template that can no longer be sent
/// pauses the campaigns sending it.
pub(super) async fn template_status(
    state: &AppState,
    waba_id: &str,
    name: &str,
    language: &str,
    status: &str,
    stop: Option<&'static str>,
) -> anyhow::Result<()> {
    let conn = &state.db.conn;
    let orgs: Vec<Uuid> = phone_number::Entity::find()
        .select_only()
        .column(phone_number::Column::OrganizationId)
        .filter(phone_number::Column::WabaId.eq(waba_id))
        .distinct()
        .into_tuple()
        .all(conn)
        .await?;
    if orgs.is_empty() {
        return Ok(());
    }
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let templates = template::Entity::find()
        .filter(template::Column::OrganizationId.is_in(orgs))
        .filter(template::Column::Name.eq(name))
        .filter(template::Column::Language.eq(language))
        .all(&*txn)
        .await?;
    for t in &templates {
        template::Entity::update_many()
            .col_expr(template::Column::Status, Expr::val(status))
            .filter(template::Column::Id.eq(t.id))
            .exec(&*txn)
            .await?;
        let Some(reason) = stop else { continue };
        let blocked = Action::PlatformBlocked(reason.to_owned());
        let live: Vec<(Uuid, CampaignStatus)> = campaign::Entity::find()
            .select_only()
            .column(campaign::Column::Id)
            .column(campaign::Column::Status)
            .filter(campaign::Column::TemplateId.eq(t.id))
            .filter(
                campaign::Column::Status
                    .is_in([CampaignStatus::Sending, CampaignStatus::Scheduled]),
            )
            .into_tuple()
            .all(&*txn)
            .await?;
        for (c, status) in live {
            // The core decides; a status it does not pause from is left alone.
            if let Ok(t) = transition(status, &blocked, &Facts::default()) {
                sending::apply(&*txn, c, &[status], &t, now).await?;
            }
        }
    }
    txn.commit().await?;
    Ok(())
}
