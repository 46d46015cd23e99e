//! Campaign use cases: create, list, detail, audience, cost preview, send, pause, resume,
//! duplicate. Every state change goes through `wm_core::campaigns::transition`.
//!
//! Here: create and duplicate; `read` (a row, the detail, `get`), `list`, `audience`, `send` and
//! `view` (row → wire type) hold the rest.

use crate::db::Unique;
use axum::http::StatusCode;
use sea_orm::{ActiveValue::Set, EntityTrait};
use uuid::Uuid;
use wm_core::templates;
use wm_types::campaigns::{Campaign, CampaignStatus, CreateCampaign, TemplateStatus};
use wm_types::enums::ErrorCode;

use crate::db::entities::{campaign, phone_number, template};
use crate::db::tenant::find_in_org;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

mod audience;
mod list;
mod read;
mod send;

use read::{detail_in, load};

pub use audience::{add_audience, recipients};
pub use list::list;
pub use read::{campaign_error, get};
pub use send::{pause, preview_cost, resume, send};

/// Inserts a new DRAFT and answers its detail, kept as the request's answer with it (a new
/// draft has no audience to price: its detail is a few point reads).
async fn insert_draft(
    state: &AppState,
    row: campaign::ActiveModel,
    now: i64,
) -> ApiResult<Campaign> {
    let txn = state.db.write().await?;
    let row = campaign::Entity::insert(row)
        .exec_with_returning(&*txn)
        .await?;
    let answer = detail_in(&*txn, &row, now).await?;
    crate::idempotency::seal(&txn, StatusCode::CREATED, &answer).await?;
    txn.commit().await?;
    Ok(answer)
}

/// `POST /campaigns`: a DRAFT with a sender number and an APPROVED template of the
/// organisation, and variables that name template positions.
pub async fn create(state: &AppState, org: Uuid, body: CreateCampaign) -> ApiResult<Campaign> {
    let conn = &state.db.conn;
    if find_in_org::<phone_number::Entity>(org, body.phone_number_id)
        .unique(conn)
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
        .unique(conn)
        .await?
        .filter(|t| t.status == TemplateStatus::Approved)
        .ok_or_else(|| {
            ApiError::invalid("templateId must be an APPROVED template of this organization")
        })?;
    let vars = body.variables.unwrap_or_default();
    templates::parse_variables(&vars, &templates::positions(&t.body_text))
        .map_err(ApiError::Validation)?;
    let now = state.now_ms();
    let row = draft(
        org,
        body.name.trim().to_owned(),
        body.phone_number_id,
        body.template_id,
        serde_json::Value::Object(vars).to_string(),
        body.scheduled_at.map(|t| t.millis()),
        None,
        now,
    );
    insert_draft(state, row, now).await
}

/// A new DRAFT campaign row.
#[allow(clippy::too_many_arguments)]
fn draft(
    org: Uuid,
    name: String,
    phone_number: Uuid,
    template: Uuid,
    variables: String,
    scheduled_at: Option<i64>,
    source: Option<Uuid>,
    now: i64,
) -> campaign::ActiveModel {
    campaign::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        name: Set(name),
        phone_number_id: Set(phone_number),
        template_id: Set(template),
        status: Set(CampaignStatus::Draft),
        variables: Set(variables),
        scheduled_at: Set(scheduled_at),
        started_at: Set(None),
        completed_at: Set(None),
        paused_at: Set(None),
        next_batch_at: Set(None),
        batch_size: Set(None),
        batch_interval_min: Set(None),
        stop_reason: Set(None),
        source_campaign_id: Set(source),
        locked_until: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        open_charge_micros: Set(None),
        open_covered: Set(0),
        open_prices: Set(None),
        audience_rev: Set(0),
    }
}

/// `POST /campaigns/{id}/duplicate`: a new DRAFT with the same number, template and
/// variables (no recipients), pointing back to its source.
pub async fn duplicate(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Campaign> {
    let src = load(&state.db.conn, org, id).await?;
    let now = state.now_ms();
    let row = draft(
        org,
        format!("{} (copy)", src.name),
        src.phone_number_id,
        src.template_id,
        src.variables.clone(),
        None,
        Some(src.id),
        now,
    );
    insert_draft(state, row, now).await
}
