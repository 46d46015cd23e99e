//! Sender numbers: the organisation's numbers with their platform account (the platform's
//! number id, its business account (WABA), the access token — encrypted at rest with
//! `WM_SECRET_KEY`, never returned, never logged) and their own pace.

use crate::db::Unique;
use axum::http::StatusCode;
use sea_orm::{ActiveModelTrait, ActiveValue::Set, EntityTrait, QueryOrder};
use uuid::Uuid;
use wm_core::phone::Phone;
use wm_types::campaigns::{CreatePhoneNumber, PhoneNumber, QualityRating, UpdatePhoneNumber};
use wm_types::lookups::List;

use crate::db::entities::phone_number;
use crate::db::tenant::{find_in_org, in_org};
use crate::error::{ApiError, ApiResult, is_unique_violation};
use crate::state::AppState;

/// The organisation's sender numbers, oldest first.
pub async fn list(state: &AppState, org: Uuid) -> ApiResult<List<PhoneNumber>> {
    let rows = in_org::<phone_number::Entity>(org)
        .order_by_asc(phone_number::Column::CreatedAt)
        .all(&state.db.conn)
        .await?;
    Ok(List {
        data: rows.into_iter().map(PhoneNumber::from).collect(),
    })
}

/// The stored form of a token: encrypted, or a 400 when the server has no key.
fn seal(state: &AppState, token: &str) -> ApiResult<String> {
    let key = state.secret_key.as_ref().ok_or_else(|| {
        ApiError::invalid("accessToken cannot be stored: the server has no WM_SECRET_KEY")
    })?;
    Ok(key.encrypt(token))
}

fn conflict(e: sea_orm::DbErr) -> ApiError {
    if is_unique_violation(&e) {
        ApiError::business(
            StatusCode::CONFLICT,
            None,
            "The organization already has this number, or another number has this platformPhoneNumberId.",
        )
    } else {
        e.into()
    }
}

/// Adds a sender number (409 when the organisation has it, or the platform id is taken).
pub async fn create(
    state: &AppState,
    org: Uuid,
    body: CreatePhoneNumber,
) -> ApiResult<PhoneNumber> {
    let phone = Phone::parse(&body.number_e164).map_err(|_| {
        ApiError::invalid(
            "numberE164 must be a phone number in international format (+ followed by 6 to 15 digits)",
        )
    })?;
    let token = body
        .access_token
        .as_deref()
        .map(|t| seal(state, t))
        .transpose()?;
    let txn = state.db.write().await?;
    let row = phone_number::Entity::insert(phone_number::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        number_e164: Set(phone.as_str().to_owned()),
        display_name: Set(body.display_name.trim().to_owned()),
        quality_rating: Set(body.quality_rating.unwrap_or(QualityRating::Green)),
        platform_phone_number_id: Set(body.platform_phone_number_id.map(|s| s.trim().to_owned())),
        waba_id: Set(body.waba_id.map(|s| s.trim().to_owned())),
        access_token_enc: Set(token),
        mps: Set(body.mps.and_then(|n| i32::try_from(n).ok())),
        provider: Set(None),
        created_at: Set(state.now_ms()),
    })
    .exec_with_returning(&*txn)
    .await
    .map_err(conflict)?;
    txn.commit().await?;
    Ok(PhoneNumber::from(row))
}

/// Changes a sender number; only sent fields change, `null` clears a platform field.
pub async fn update(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: UpdatePhoneNumber,
) -> ApiResult<PhoneNumber> {
    let token = match &body.access_token {
        Some(Some(t)) => Some(Some(seal(state, t)?)),
        Some(None) => Some(None),
        None => None,
    };
    let txn = state.db.write().await?;
    let row = find_in_org::<phone_number::Entity>(org, id)
        .unique(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found("Phone number"))?;
    let mut am: phone_number::ActiveModel = row.into();
    if let Some(n) = body.display_name {
        am.display_name = Set(n.trim().to_owned());
    }
    if let Some(q) = body.quality_rating {
        am.quality_rating = Set(q);
    }
    if let Some(v) = body.platform_phone_number_id {
        am.platform_phone_number_id = Set(v.map(|s| s.trim().to_owned()));
    }
    if let Some(v) = body.waba_id {
        am.waba_id = Set(v.map(|s| s.trim().to_owned()));
    }
    if let Some(v) = token {
        am.access_token_enc = Set(v);
    }
    if let Some(v) = body.mps {
        am.mps = Set(v.and_then(|n| i32::try_from(n).ok()));
    }
    let row = am.update(&*txn).await.map_err(conflict)?;
    txn.commit().await?;
    Ok(PhoneNumber::from(row))
}
