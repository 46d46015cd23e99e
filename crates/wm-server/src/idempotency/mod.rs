//! `Idempotency-Key` on POSTs (the IETF draft "The Idempotency-Key HTTP Header Field", as
//! Stripe has long done it): a client that timed out on `POST /campaigns/{id}/send` or
//! `POST /contacts` sends the same request again with the same key and gets the first
//! answer again (`Idempotent-Replayed: true`) instead of a second charge or a duplicate.
//!
//! Keys belong to the API key that sent them (the operator token has its own), hold 24
//! hours and are kept in the database (`idempotency_keys`), so they hold across replicas and
//! restarts. The same key with another request (method, path, query or body; a multipart
//! body's boundary aside) is `422 IDEMPOTENCY_KEY_REUSED`; a request while the first with
//! its key still runs is `409 IDEMPOTENCY_KEY_IN_USE`. What the request never really did is
//! not kept, so it may be sent again with the key: a 5xx, a 401, a 403 and a 429 that
//! committed nothing, and an answer given before the body was read. A process that dies
//! mid-request before committing anything leaves its key to the next request after
//! [`LEASE_MS`]; one that dies after its request's effects committed leaves the answer
//! sealed with them (the routes that [`seal`] it), or a key that says the first attempt
//! completed (`409 IDEMPOTENCY_KEY_ANSWER_LOST`) — never one that runs the request again
//! (`keyed`).

mod fingerprint;
mod keyed;

pub use keyed::{Keyed, current, seal};

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sea_orm::ActiveValue::Set;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};
use uuid::Uuid;
use wm_types::enums::ErrorCode;

use crate::db::entities::idempotency_key as row;
use crate::db::group::Group;
use crate::error::ApiError;
use crate::state::AppState;
use fingerprint::Fingerprint;

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// The response header of an answer given again.
pub const REPLAYED: &str = "idempotent-replayed";
/// The longest key.
pub const MAX_KEY: usize = 255;
/// How long a key holds its answer.
pub const TTL_MS: i64 = 24 * 3_600_000;
/// How long a running request holds its key: after that, a process that died mid-request
/// no longer blocks it.
pub const LEASE_MS: i64 = 120_000;
/// The largest body read to compare a repeated request (the largest any route takes).
const MAX_BODY: usize = wm_types::imports::MAX_IMPORT_BYTES;

/// The two writes of a key, each with group commit ([`crate::db::group`]): many requests
/// with keys at once take one writer's turn, not two each.
#[derive(Default)]
pub struct Groups {
    take: Group<Take, Begin>,
    finish: Group<Finish, ()>,
}

/// A key to take for a request.
struct Take {
    scope: Uuid,
    key: String,
    method: String,
    path: String,
    now: i64,
}

/// What a request that held a key leaves: its answer, the key free again, or (effects
/// committed, no answer to keep) the key released as completed.
enum Finish {
    Remember {
        scope: Uuid,
        key: String,
        digest: String,
        status: StatusCode,
        content_type: Option<String>,
        body: String,
    },
    Forget {
        scope: Uuid,
        key: String,
    },
    Completed {
        scope: Uuid,
        key: String,
    },
}

/// What a key says about a request.
enum Begin {
    /// New (or free again): run it, holding the key taken at this time.
    Run(i64),
    /// Answered before: give the answer again if the request is the same.
    Answered(row::Model),
    /// Still running elsewhere.
    Running,
    /// Its request's effects committed, and its answer is not known.
    Lost,
}

/// Runs a POST with an `Idempotency-Key` at most once per key of `scope` (the API key's id,
/// or nil for the operator); any other request passes straight on.
pub async fn guard(state: &AppState, scope: Uuid, req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let Some(raw) = req.headers().get(HEADER) else {
        return next.run(req).await;
    };
    let key = match raw.to_str() {
        Ok(k)
            if !k.is_empty()
                && k.len() <= MAX_KEY
                && k.bytes().all(|b| b.is_ascii_graphic() || b == b' ') =>
        {
            k.to_owned()
        }
        _ => {
            return ApiError::invalid(format!(
                "the Idempotency-Key header must be 1 to {MAX_KEY} visible ASCII characters"
            ))
            .into_response();
        }
    };
    let (parts, body) = req.into_parts();
    let mut print = Fingerprint::new(&parts);
    let begun = begin(state, scope, &key, &parts, state.now_ms()).await;
    match begun {
        Err(e) => e.into_response(),
        Ok(Begin::Running) => ApiError::business(
            StatusCode::CONFLICT,
            Some(ErrorCode::IdempotencyKeyInUse),
            "A request with this Idempotency-Key is still running; try again shortly.",
        )
        .into_response(),
        Ok(Begin::Lost) => ApiError::business(
            StatusCode::CONFLICT,
            Some(ErrorCode::IdempotencyKeyAnswerLost),
            "The request with this Idempotency-Key completed, but its answer was lost (the server stopped before answering); it is not run again. Read the resource to see what it did.",
        )
        .into_response(),
        Ok(Begin::Answered(answer)) => {
            if fingerprint::drain(body, &mut print, MAX_BODY)
                .await
                .is_err()
            {
                return ApiError::invalid("the request body could not be read").into_response();
            }
            if print.digest().as_deref() != Some(answer.fingerprint.as_str()) {
                return reused().into_response();
            }
            replay(answer)
        }
        Ok(Begin::Run(taken_at)) => {
            let print = Arc::new(Mutex::new(print));
            let req = Request::from_parts(parts, fingerprint::hashed(body, print.clone()));
            let keyed = Arc::new(Keyed {
                scope,
                key: key.clone(),
                taken_at,
                print: print.clone(),
                sealed: AtomicBool::new(false),
                committed: AtomicBool::new(false),
                clock: state.clock.clone(),
            });
            let marker: Arc<dyn crate::db::BeforeCommit> = Arc::new(keyed::Marker(keyed.clone()));
            let run = crate::db::BEFORE_COMMIT.scope(marker, next.run(req));
            let response = keyed::KEYED.scope(keyed.clone(), run).await;
            if let Some(hold) = state.settings.hold_keyed_answers {
                tokio::time::sleep(hold).await;
            }
            if keyed.is_sealed() {
                // The answer committed with the work: nothing more to write.
                return response;
            }
            let digest = print
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .digest();
            finish(state, &keyed, digest, response).await
        }
    }
}

fn reused() -> ApiError {
    ApiError::business(
        StatusCode::UNPROCESSABLE_ENTITY,
        Some(ErrorCode::IdempotencyKeyReused),
        "This Idempotency-Key was used with another request.",
    )
}

fn by_key(scope: Uuid, key: &str) -> sea_orm::Select<row::Entity> {
    row::Entity::find()
        .filter(row::Column::Scope.eq(scope))
        .filter(row::Column::IdempotencyKey.eq(key))
}

/// Takes the key for this request, or says what holds it.
async fn begin(
    state: &AppState,
    scope: Uuid,
    key: &str,
    parts: &axum::http::request::Parts,
    now: i64,
) -> Result<Begin, ApiError> {
    // A retry of an answered request is a read: no write transaction.
    if let Some(held) = by_key(scope, key).one(&state.db.conn).await?
        && held.status_code.is_some()
        && held.created_at > now - TTL_MS
    {
        return Ok(Begin::Answered(held));
    }
    let take = Take {
        scope,
        key: key.to_owned(),
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        now,
    };
    let st = state.clone();
    state
        .singleton(|_| Groups::default())
        .take
        .run(take, move |items| take_all(st.clone(), items))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("the Idempotency-Key was not taken: {e}")))
}

/// Takes the keys of one turn in one transaction.
async fn take_all(state: AppState, items: Vec<Take>) -> Result<Vec<Begin>, String> {
    let taken = async {
        let txn = state.db.write().await?;
        let mut out = Vec::with_capacity(items.len());
        for t in items {
            out.push(take_one(&*txn, t).await?);
        }
        txn.commit().await?;
        Ok::<_, sea_orm::DbErr>(out)
    };
    taken.await.map_err(|e| e.to_string())
}

async fn take_one(conn: &impl ConnectionTrait, t: Take) -> Result<Begin, sea_orm::DbErr> {
    let taken = row::Entity::insert(row::ActiveModel {
        scope: Set(t.scope),
        idempotency_key: Set(t.key.clone()),
        fingerprint: Set(String::new()),
        method: Set(t.method),
        path: Set(t.path),
        status_code: Set(None),
        content_type: Set(None),
        body: Set(None),
        locked_until: Set(Some(t.now + LEASE_MS)),
        created_at: Set(t.now),
        committed_at: Set(None),
    })
    .on_conflict(
        OnConflict::columns([row::Column::Scope, row::Column::IdempotencyKey])
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(conn)
    .await?;
    if taken == 1 {
        return Ok(Begin::Run(t.now));
    }
    match by_key(t.scope, &t.key).one(conn).await? {
        // Forgotten between the two statements: taken by whoever wrote it again.
        None => Ok(Begin::Running),
        Some(held) => take_over(conn, held, t.now).await,
    }
}

/// A key already written: its answer, or the key itself when it expired or its request
/// died (taken only if nobody took it first).
async fn take_over(
    conn: &impl ConnectionTrait,
    held: row::Model,
    now: i64,
) -> Result<Begin, sea_orm::DbErr> {
    let expired = held.created_at <= now - TTL_MS;
    if !expired {
        if held.status_code.is_some() {
            return Ok(Begin::Answered(held));
        }
        if held.locked_until.is_some_and(|until| until > now) {
            return Ok(Begin::Running);
        }
        if held.committed_at.is_some() {
            return Ok(Begin::Lost);
        }
    }
    let mut q = row::Entity::update_many()
        .col_expr(row::Column::Fingerprint, Expr::val(""))
        .col_expr(row::Column::StatusCode, Expr::val(Option::<i32>::None))
        .col_expr(row::Column::ContentType, Expr::val(Option::<String>::None))
        .col_expr(row::Column::Body, Expr::val(Option::<String>::None))
        .col_expr(row::Column::LockedUntil, Expr::val(now + LEASE_MS))
        .col_expr(row::Column::CreatedAt, Expr::val(now))
        .col_expr(row::Column::CommittedAt, Expr::val(Option::<i64>::None))
        .filter(row::Column::Scope.eq(held.scope))
        .filter(row::Column::IdempotencyKey.eq(held.idempotency_key.clone()))
        .filter(row::Column::CreatedAt.eq(held.created_at));
    q = match held.locked_until {
        Some(until) => q.filter(row::Column::LockedUntil.eq(until)),
        None => q.filter(row::Column::LockedUntil.is_null()),
    };
    Ok(if q.exec(conn).await?.rows_affected == 1 {
        Begin::Run(now)
    } else {
        Begin::Running
    })
}

/// Keeps the answer of the request that held the key (or frees the key when the request
/// never really ran, or releases it as completed when it committed effects but has no
/// answer to keep) and gives it.
async fn finish(
    state: &AppState,
    keyed: &Keyed,
    digest: Option<String>,
    response: Response,
) -> Response {
    let (scope, key) = (keyed.scope, keyed.key.as_str());
    let (parts, body) = response.into_parts();
    let status = parts.status;
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(e) => {
            let _ = leave(state, unanswered(keyed)).await;
            return ApiError::Internal(anyhow::anyhow!("the answer could not be read: {e}"))
                .into_response();
        }
    };
    let ran = !(status.is_server_error()
        || matches!(
            status,
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS
        ));
    let text = std::str::from_utf8(&bytes).ok();
    let (scope, key) = (scope, key.to_owned());
    let item = match (ran, digest, text) {
        (true, Some(digest), Some(text)) => Finish::Remember {
            scope,
            key,
            digest,
            status,
            content_type: parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            body: text.to_owned(),
        },
        _ => unanswered(keyed),
    };
    let kept = leave(state, item).await;
    if let Err(e) = kept {
        // The answer stands; a retry with the key may run the request again (as without
        // a key), which is logged.
        tracing::error!(error = %e, "an Idempotency-Key answer was not kept");
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// A key whose request leaves no answer to keep: free again, unless some effect of it
/// committed (then a retry must not run it again).
fn unanswered(keyed: &Keyed) -> Finish {
    let (scope, key) = (keyed.scope, keyed.key.clone());
    if keyed.has_committed() {
        Finish::Completed { scope, key }
    } else {
        Finish::Forget { scope, key }
    }
}

/// Leaves a key as its request ended (with the other requests' of the same turn).
async fn leave(state: &AppState, item: Finish) -> Result<(), String> {
    let st = state.clone();
    state
        .singleton(|_| Groups::default())
        .finish
        .run(item, move |items| finish_all(st.clone(), items))
        .await
}

async fn finish_all(state: AppState, items: Vec<Finish>) -> Result<Vec<()>, String> {
    let n = items.len();
    let done = async {
        let txn = state.db.write().await?;
        for item in items {
            finish_one(&*txn, item).await?;
        }
        txn.commit().await
    };
    done.await.map_err(|e| e.to_string())?;
    Ok(vec![(); n])
}

async fn finish_one(conn: &impl ConnectionTrait, item: Finish) -> Result<(), sea_orm::DbErr> {
    match item {
        Finish::Remember {
            scope,
            key,
            digest,
            status,
            content_type,
            body,
        } => {
            row::Entity::update_many()
                .col_expr(row::Column::Fingerprint, Expr::val(digest))
                .col_expr(
                    row::Column::StatusCode,
                    Expr::val(i32::from(status.as_u16())),
                )
                .col_expr(row::Column::ContentType, Expr::val(content_type))
                .col_expr(row::Column::Body, Expr::val(body))
                .col_expr(row::Column::LockedUntil, Expr::val(Option::<i64>::None))
                .filter(row::Column::Scope.eq(scope))
                .filter(row::Column::IdempotencyKey.eq(key))
                .exec(conn)
                .await?;
        }
        Finish::Completed { scope, key } => {
            row::Entity::update_many()
                .col_expr(row::Column::LockedUntil, Expr::val(Option::<i64>::None))
                .filter(row::Column::Scope.eq(scope))
                .filter(row::Column::IdempotencyKey.eq(key))
                .exec(conn)
                .await?;
        }
        Finish::Forget { scope, key } => {
            row::Entity::delete_many()
                .filter(row::Column::Scope.eq(scope))
                .filter(row::Column::IdempotencyKey.eq(key))
                .exec(conn)
                .await?;
        }
    }
    Ok(())
}

/// The kept answer, again.
fn replay(answer: row::Model) -> Response {
    let status = answer
        .status_code
        .and_then(|s| u16::try_from(s).ok())
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::OK);
    let mut response = (status, answer.body.unwrap_or_default()).into_response();
    let h = response.headers_mut();
    if let Some(ct) = answer
        .content_type
        .and_then(|c| HeaderValue::from_str(&c).ok())
    {
        h.insert(header::CONTENT_TYPE, ct);
    }
    h.insert(REPLAYED, HeaderValue::from_static("true"));
    response
}

/// Forgets keys older than [`TTL_MS`].
pub async fn purge(conn: &impl ConnectionTrait, now: i64) -> Result<(), sea_orm::DbErr> {
    row::Entity::delete_many()
        .filter(row::Column::CreatedAt.lt(now - TTL_MS))
        .exec(conn)
        .await?;
    Ok(())
}
