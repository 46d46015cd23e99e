//! `/contacts/imports`: contact import jobs.

use axum::extract::multipart::MultipartRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use wm_types::PageQuery;
use wm_types::common::Page;
use wm_types::imports::ContactImport;

use crate::error::{ApiError, ApiResult};
use crate::extract::{Authed, ContactsRead, ContactsWrite, NoQuery, ValidatedQuery, path_id};
use crate::services::imports as svc;
use crate::services::imports::upload::MAX_IMPORT_BYTES;
use crate::state::AppState;

const WHAT: &str = "Import";

/// The import routes; the upload takes bodies up to [`MAX_IMPORT_BYTES`].
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/contacts/imports",
            get(list)
                .post(upload)
                .layer(DefaultBodyLimit::max(MAX_IMPORT_BYTES)),
        )
        .route("/contacts/imports/{id}", get(detail))
}

async fn upload(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    body: Result<Multipart, MultipartRejection>,
) -> ApiResult<(StatusCode, Json<ContactImport>)> {
    let multipart = body.map_err(|_| {
        ApiError::business(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            "Imports are uploaded as multipart/form-data with an options part and a file part.",
        )
    })?;
    let job = svc::upload(&s, &auth, multipart).await?;
    Ok((StatusCode::ACCEPTED, Json(svc::view(job))))
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    ValidatedQuery(q): ValidatedQuery<PageQuery>,
) -> ApiResult<Json<Page<ContactImport>>> {
    Ok(Json(svc::list(&s, auth.org_id, q).await?))
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    Path(id): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<ContactImport>> {
    Ok(Json(svc::get(&s, auth.org_id, path_id(&id, WHAT)?).await?))
}
