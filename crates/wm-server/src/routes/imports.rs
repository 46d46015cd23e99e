//! `/contacts/imports`: contact import jobs.

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::StatusCode;
use axum::routing::get;
use wm_types::PageQuery;
use wm_types::common::Page;
use wm_types::imports::ContactImport;

use crate::error::{ApiError, ApiResult};
use crate::extract::{Authed, ContactsRead, ContactsWrite, ImportId, NoQuery, ValidatedQuery};
use crate::reply::{Accepted, Json};
use crate::services::imports as svc;
use crate::services::imports::upload::MAX_IMPORT_BYTES;
use crate::state::AppState;

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

/// The upload's body: multipart/form-data with an `options` part (JSON) and a `file` part;
/// any other body is a 415.
struct Upload(Multipart);

impl<S: Send + Sync> FromRequest<S> for Upload {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        Multipart::from_request(req, state)
            .await
            .map(Upload)
            .map_err(|_| {
                ApiError::business(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    None,
                    "Imports are uploaded as multipart/form-data with an options part and a file part.",
                )
            })
    }
}

async fn upload(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    Upload(multipart): Upload,
) -> ApiResult<Accepted<ContactImport>> {
    let job = svc::upload(&s, &auth, multipart).await?;
    Ok(Accepted(svc::view(job)))
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
    _: NoQuery,
    ImportId(id): ImportId,
) -> ApiResult<Json<ContactImport>> {
    Ok(Json(svc::get(&s, auth.org_id, id).await?))
}
