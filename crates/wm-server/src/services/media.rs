//! Inbound media: fetched from the platform soon after its message arrives, retried with
//! backoff until the platform's deadline (Meta keeps an inbound media id 7 days), kept
//! in the media store, and served by `GET /media/{id}`.
//!
//! Each file is claimed with a lease (`media.claimed_until`) in its own short transaction,
//! so replicas fetch side by side and a crash mid-download only delays a file by the lease.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::platform::FetchError;
use wm_core::provider::PlatformAccount;

use crate::db::Unique;
use crate::db::entities::media;
use crate::db::messages::{MEDIA_FAILED, MEDIA_PENDING, MEDIA_STORED, MEDIA_UPLOAD};
use crate::db::tenant::find_in_org;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// How long a fetch holds its file.
const LEASE_MS: i64 = 5 * 60_000;
/// The first retry's delay; each next one doubles, up to [`MAX_BACKOFF_MS`].
const FIRST_BACKOFF_MS: i64 = 30_000;
/// The longest wait between two attempts.
const MAX_BACKOFF_MS: i64 = 3_600_000;
/// Files claimed per pass.
const BATCH: u64 = 20;

/// The store's key of a media file: its organisation, then its id.
fn key(m: &media::Model) -> String {
    format!("{}/{}", m.organization_id, m.id)
}

/// Fetches the files that are due; how many were settled (stored or given up).
pub async fn fetch_due(state: &AppState) -> anyhow::Result<usize> {
    let now = state.now_ms();
    let ids: Vec<Uuid> = media::Entity::find()
        .select_only()
        .column(media::Column::Id)
        .filter(media::Column::Status.eq(MEDIA_PENDING))
        .filter(media::Column::NextAttemptAt.lte(now))
        .filter(
            Condition::any()
                .add(media::Column::ClaimedUntil.is_null())
                .add(media::Column::ClaimedUntil.lte(now)),
        )
        .order_by_asc(media::Column::NextAttemptAt)
        .limit(BATCH)
        .into_tuple()
        .all(&state.db.conn)
        .await?;
    let mut settled = 0;
    for id in ids {
        if let Some(row) = claim(state, id).await?
            && fetch_one(state, row).await?
        {
            settled += 1;
        }
    }
    Ok(settled)
}

/// Takes the lease of one file; `None` when another replica has it or it is settled.
async fn claim(state: &AppState, id: Uuid) -> anyhow::Result<Option<media::Model>> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let n = media::Entity::update_many()
        .col_expr(media::Column::ClaimedUntil, Expr::val(now + LEASE_MS))
        .filter(media::Column::Id.eq(id))
        .filter(media::Column::Status.eq(MEDIA_PENDING))
        .filter(
            Condition::any()
                .add(media::Column::ClaimedUntil.is_null())
                .add(media::Column::ClaimedUntil.lte(now)),
        )
        .exec(&*txn)
        .await?
        .rows_affected;
    txn.commit().await?;
    if n == 0 {
        return Ok(None);
    }
    Ok(media::Entity::find_by_id(id).unique(&state.db.conn).await?)
}

/// Fetches and keeps one claimed file; `true` when it is settled.
async fn fetch_one(state: &AppState, m: media::Model) -> anyhow::Result<bool> {
    let outcome = match account(state, &m).await {
        Ok(account) => match state.registry.media_source(&m.provider) {
            Some(source) => {
                source
                    .fetch(
                        &m.platform_media_id,
                        &account,
                        state.settings.media.max_bytes,
                    )
                    .await
            }
            None => Err(FetchError::RetryLater(format!(
                "no media source named {:?} is configured",
                m.provider
            ))),
        },
        Err(e) => Err(e),
    };
    let now = state.now_ms();
    let fetched = match outcome {
        Ok(f) => f,
        Err(e) => return settle_failure(state, &m, e, now).await,
    };
    state.media.put(&key(&m), fetched.bytes.clone()).await?;
    let size = i64::try_from(fetched.bytes.len()).unwrap_or(i64::MAX);
    let mime = m.mime_type.clone().or(fetched.mime_type);
    let txn = state.db.write().await?;
    media::Entity::update_many()
        .col_expr(media::Column::Status, Expr::val(MEDIA_STORED))
        .col_expr(media::Column::Size, Expr::val(size))
        .col_expr(media::Column::MimeType, Expr::val(mime))
        .col_expr(media::Column::StorageKey, Expr::val(key(&m)))
        .col_expr(media::Column::Attempts, Expr::val(m.attempts + 1))
        .col_expr(media::Column::Error, Expr::val(Option::<String>::None))
        .col_expr(media::Column::ClaimedUntil, Expr::val(Option::<i64>::None))
        .filter(media::Column::Id.eq(m.id))
        .exec(&*txn)
        .await?;
    txn.commit().await?;
    Ok(true)
}

/// Records a failed attempt: tried again after a backoff, or given up once the platform's
/// deadline would pass or the platform refused for good.
async fn settle_failure(
    state: &AppState,
    m: &media::Model,
    e: FetchError,
    now: i64,
) -> anyhow::Result<bool> {
    let attempts = m.attempts + 1;
    let shift = u32::try_from(m.attempts.clamp(0, 16)).unwrap_or(16);
    let next = now + (FIRST_BACKOFF_MS << shift).min(MAX_BACKOFF_MS);
    let give_up = matches!(e, FetchError::Gone(_)) || next >= m.expires_at;
    if give_up {
        tracing::warn!(media = %m.id, error = %e, "an inbound media file will not be fetched");
    } else {
        tracing::info!(media = %m.id, error = %e, attempts, "an inbound media file is fetched again later");
    }
    let status = if give_up { MEDIA_FAILED } else { MEDIA_PENDING };
    let txn = state.db.write().await?;
    media::Entity::update_many()
        .col_expr(media::Column::Status, Expr::val(status))
        .col_expr(media::Column::Attempts, Expr::val(attempts))
        .col_expr(media::Column::NextAttemptAt, Expr::val(next))
        .col_expr(media::Column::Error, Expr::val(e.to_string()))
        .col_expr(media::Column::ClaimedUntil, Expr::val(Option::<i64>::None))
        .filter(media::Column::Id.eq(m.id))
        .exec(&*txn)
        .await?;
    txn.commit().await?;
    Ok(give_up)
}

/// The platform account the file came through (a number's, a Page's), its token
/// decrypted for the call.
async fn account(state: &AppState, m: &media::Model) -> Result<PlatformAccount, FetchError> {
    let later = |why: String| FetchError::RetryLater(why);
    let row = m
        .phone_number_id
        .ok_or_else(|| FetchError::Gone("the media came through no known account".into()))?;
    // The same account its sends use (its token decrypted, a failure logged).
    crate::services::outbound::sender::of_row(state, row)
        .await
        .map_err(|e| later(e.to_string()))?
        .ok_or_else(|| FetchError::Gone("the account it came through was deleted".into()))?
        .account
        .ok_or_else(|| {
            later("the account has no platform credentials, or its token cannot be read".into())
        })
}

/// A stored file: its MIME type and bytes.
pub struct File {
    /// Content-Type.
    pub mime_type: String,
    /// File name, for `Content-Disposition`.
    pub filename: Option<String>,
    /// The bytes.
    pub bytes: axum::body::Bytes,
}

/// `GET /media/{id}`: the file, once fetched.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<File> {
    let m = find_in_org::<media::Entity>(org, id)
        .unique(&state.db.conn)
        .await?
        .ok_or_else(|| ApiError::not_found("Media"))?;
    let not_stored = || {
        ApiError::business(
            axum::http::StatusCode::CONFLICT,
            None,
            match m.status.as_str() {
                MEDIA_FAILED => "The media could not be fetched from the platform.",
                _ => "The media is still being fetched from the platform; try again shortly.",
            },
        )
    };
    let Some(key) = m
        .storage_key
        .as_deref()
        .filter(|_| m.status == MEDIA_STORED)
    else {
        return Err(not_stored());
    };
    let bytes = state
        .media
        .get(key)
        .await
        .map_err(ApiError::Internal)?
        .ok_or_else(not_stored)?;
    Ok(File {
        mime_type: m
            .mime_type
            .clone()
            .unwrap_or_else(|| "application/octet-stream".into()),
        filename: m.filename.clone(),
        bytes,
    })
}

/// `POST /media`: a file to send in replies, checked against the platform's types and
/// sizes, kept in the media store (uploaded to the platform when first sent).
pub async fn upload(
    state: &AppState,
    org: Uuid,
    bytes: Vec<u8>,
    mime_type: &str,
    filename: Option<String>,
) -> ApiResult<wm_types::messages::UploadedMedia> {
    let mime = mime_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let Some((kind, max)) = state.registry.takes_media(&mime) else {
        return Err(ApiError::invalid(format!(
            "file must be an image (image/jpeg, image/png), a sticker (image/webp), a video \
             (video/mp4, video/3gpp), an audio (audio/aac, audio/amr, audio/mpeg, audio/mp4, \
             audio/ogg) or a document (text/plain, application/pdf, Office formats); {mime:?} is \
             not one the platform takes"
        )));
    };
    if bytes.is_empty() {
        return Err(ApiError::invalid("file must not be empty"));
    }
    let size = bytes.len() as u64;
    if size > max {
        return Err(ApiError::invalid(format!(
            "file must be at most {max} bytes for {kind} ({mime}); it has {size}"
        )));
    }
    let txn = state.db.write().await?;
    let (id, sha256) = keep(state, &txn, org, bytes, &mime, filename.clone()).await?;
    let answer = wm_types::messages::UploadedMedia {
        id,
        mime_type: mime,
        size,
        sha256,
        filename,
    };
    crate::idempotency::seal(&txn, axum::http::StatusCode::CREATED, &answer).await?;
    txn.commit().await?;
    Ok(answer)
}

/// Keeps a file wm received (an upload, a website visitor's file) in the media store and
/// its row in `txn`, STORED: its id and SHA-256.
pub async fn keep(
    state: &AppState,
    txn: &crate::db::WriteTxn,
    org: Uuid,
    bytes: Vec<u8>,
    mime: &str,
    filename: Option<String>,
) -> ApiResult<(Uuid, String)> {
    use sha2::{Digest, Sha256};
    let size = bytes.len() as u64;
    let id = Uuid::now_v7();
    let key = format!("{org}/{id}");
    let sha256 = hex::encode(Sha256::digest(&bytes));
    state
        .media
        .put(&key, bytes)
        .await
        .map_err(ApiError::Internal)?;
    let now = state.now_ms();
    media::Entity::insert(media::ActiveModel {
        id: Set(id),
        organization_id: Set(org),
        message_id: Set(None),
        phone_number_id: Set(None),
        origin: Set(MEDIA_UPLOAD.to_owned()),
        provider: Set(String::new()),
        platform_media_id: Set(String::new()),
        mime_type: Set(Some(mime.to_owned())),
        sha256: Set(Some(sha256.clone())),
        filename: Set(filename),
        size: Set(i64::try_from(size).ok()),
        storage_key: Set(Some(key)),
        status: Set(MEDIA_STORED.to_owned()),
        attempts: Set(0),
        next_attempt_at: Set(None),
        claimed_until: Set(None),
        expires_at: Set(0),
        error: Set(None),
        created_at: Set(now),
    })
    .exec_without_returning(&**txn)
    .await?;
    Ok((id, sha256))
}
