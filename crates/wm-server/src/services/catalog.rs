//! Templates, sender numbers and the wallet: what campaigns are made of (lookups for API
//! keys, creation and top-ups for the operator).

use crate::db::Unique;
use sea_orm::{ActiveValue::Set, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_core::pricing::allowance_covered;
use wm_types::campaigns::{
    CreateTemplate, LedgerKind, SetRates, Template, TemplateStatus, TopUp, Wallet,
};
use wm_types::lookups::List;

use crate::db::entities::{organization, template};
use crate::db::tenant::in_org;
use crate::error::{ApiError, ApiResult};
use crate::services::{sending, wallet};
use crate::state::AppState;

/// The organisation's templates, oldest first.
pub async fn templates(state: &AppState, org: Uuid) -> ApiResult<List<Template>> {
    let rows = in_org::<template::Entity>(org)
        .order_by_asc(template::Column::CreatedAt)
        .all(&state.db.conn)
        .await?;
    Ok(List {
        data: rows.into_iter().map(Template::from).collect(),
    })
}

/// Adds a template (APPROVED unless said otherwise).
pub async fn add_template(
    state: &AppState,
    org: Uuid,
    body: CreateTemplate,
) -> ApiResult<Template> {
    let txn = state.db.write().await?;
    let row = template::Entity::insert(template::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        name: Set(body.name.trim().to_owned()),
        category: Set(body.category),
        language: Set(body.language.trim().to_owned()),
        body_text: Set(body.body_text),
        status: Set(body.status.unwrap_or(TemplateStatus::Approved)),
        created_at: Set(state.now_ms()),
    })
    .exec_with_returning(&*txn)
    .await?;
    txn.commit().await?;
    Ok(Template::from(row))
}

/// The wallet with its latest ledger entries and the allowance left this month.
pub async fn wallet(state: &AppState, org: Uuid) -> ApiResult<Wallet> {
    wallet_in(&state.db.conn, org, state.now_ms()).await
}

async fn wallet_in(conn: &impl ConnectionTrait, org: Uuid, now: i64) -> ApiResult<Wallet> {
    let o = organization::Entity::find_by_id(org)
        .unique(conn)
        .await?
        .ok_or_else(|| ApiError::not_found("Organization"))?;
    let included = u64::try_from(o.included_utility_messages).unwrap_or(0);
    let used = sending::allowance_used(conn, org, now).await?;
    Ok(Wallet {
        currency: o.currency,
        balance: wallet::balance(conn, org).await?,
        included_utility_messages: included,
        included_utility_remaining: allowance_covered(included, used, included),
        recent_entries: wallet::recent(conn, org, 50).await?,
    })
}

/// Adds money to the wallet.
pub async fn top_up(state: &AppState, org: Uuid, body: TopUp) -> ApiResult<Wallet> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    wallet::credit(
        &*txn,
        org,
        LedgerKind::TopUp,
        body.amount,
        None,
        "Top-up",
        now,
    )
    .await?;
    txn.commit().await?;
    state.wake_campaigns();
    wallet(state, org).await
}

/// The organisation's rate overrides.
pub async fn rates(state: &AppState, org: Uuid) -> ApiResult<SetRates> {
    let o = organization::Entity::find_by_id(org)
        .unique(&state.db.conn)
        .await?
        .ok_or_else(|| ApiError::not_found("Organization"))?;
    let markets = crate::db::stored::json_opt(
        "organizations.rate_overrides",
        o.id,
        o.rate_overrides.as_deref(),
    );
    Ok(SetRates { markets })
}

/// Replaces the organisation's rate overrides (an empty list restores the shipped card).
pub async fn set_rates(state: &AppState, org: Uuid, body: SetRates) -> ApiResult<SetRates> {
    let json = serde_json::to_string(&body.markets).map_err(|e| ApiError::Internal(e.into()))?;
    let txn = state.db.write().await?;
    organization::Entity::update_many()
        .col_expr(
            organization::Column::RateOverrides,
            sea_orm::sea_query::Expr::val((!body.markets.is_empty()).then_some(json)),
        )
        .filter(sea_orm::ColumnTrait::eq(&organization::Column::Id, org))
        .exec(&*txn)
        .await?;
    txn.commit().await?;
    Ok(body)
}
