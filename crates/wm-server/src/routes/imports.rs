//! `/contacts/imports`: contact import jobs.

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::{DefaultBodyLimit, State};
use schemars::json_schema;
use wm_types::PageQuery;
use wm_types::common::Page;
use wm_types::imports::{ContactImport, ImportOptions};

use crate::error::ApiResult;
use crate::extract::{
    Authed, ContactsRead, ContactsWrite, FormSpec, ImportId, MultipartForm, NoQuery, ValidatedQuery,
};
use crate::openapi::request_schema_in;
use crate::reply::{Accepted, Json};
use crate::services::imports as svc;
use crate::state::AppState;
use wm_types::imports::MAX_IMPORT_BYTES;

const TAG: &str = "Contacts";

/// The import routes; the upload takes bodies up to [`MAX_IMPORT_BYTES`].
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/contacts/imports",
            get_with(list, |op| {
                op.tag(TAG).summary("Contact imports, newest first")
            })
            .post_with(upload, |op| {
                op.tag(TAG).summary(
                    "Import contacts from a CSV or NDJSON file (multipart: options and file)",
                )
            })
            .layer(DefaultBodyLimit::max(MAX_IMPORT_BYTES)),
        )
        .api_route(
            "/contacts/imports/{id}",
            get_with(detail, |op| {
                op.tag(TAG)
                    .summary("An import's status, counts and refused rows")
            }),
        )
}

/// The upload's form: an `options` part (JSON) and a `file` part.
struct ImportForm;

impl FormSpec for ImportForm {
    const WHAT: &'static str =
        "Imports are uploaded as multipart/form-data with an options part and a file part.";
    const ENCODING: &'static [(&'static str, &'static str)] = &[
        ("options", "application/json"),
        (
            "file",
            "text/csv, application/x-ndjson, application/octet-stream",
        ),
    ];

    fn schema(ctx: &mut aide::generate::GenContext) -> schemars::Schema {
        json_schema!({
            "type": "object",
            "properties": {
                "options": request_schema_in::<ImportOptions>(ctx),
                "file": crate::extract::file_part()
            },
            "required": ["file"]
        })
    }
}

async fn upload(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    MultipartForm(multipart, _): MultipartForm<ImportForm>,
) -> ApiResult<Accepted<ContactImport>> {
    Ok(Accepted(svc::upload(&s, &auth, multipart).await?))
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
