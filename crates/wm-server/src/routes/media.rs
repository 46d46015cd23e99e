//! `/media`: `POST` uploads a file to send in replies (scope `conversations:write`; the
//! platform's types and sizes are checked); `GET /media/{id}` serves a file with its
//! Content-Type (scope `conversations:read`): an inbound one once wm fetched it from the
//! platform (409 while it is being fetched, or when the platform no longer had it), or an
//! uploaded one.

use aide::OperationOutput;
use aide::axum::ApiRouter;
use aide::axum::routing::{get_with, post_with};
use aide::generate::GenContext;
use aide::openapi::{Operation, Response, StatusCode as DocStatus};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use schemars::json_schema;
use wm_types::messages::UploadedMedia;

use crate::error::{ApiError, ApiResult};
use crate::extract::{
    Authed, ConversationsRead, ConversationsWrite, FormSpec, MediaId, MultipartForm, NoQuery,
};
use crate::openapi::media_type;
use crate::reply::Created;
use crate::services::media::{self, File};
use crate::state::AppState;

/// The media route.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/media",
            post_with(upload, |op| {
                op.tag("Conversations")
                    .summary("Upload a file to send in replies (multipart: file)")
            })
            .layer(DefaultBodyLimit::max(MAX_UPLOAD_BYTES)),
        )
        .api_route(
            "/media/{id}",
            get_with(download, |op| {
                op.tag("Conversations")
                    .summary("Download a media file of a message")
            }),
        )
}

/// The bytes with their Content-Type (and the file name of a document).
struct Download(File);

impl IntoResponse for Download {
    fn into_response(self) -> axum::response::Response {
        let File {
            mime_type,
            filename,
            bytes,
        } = self.0;
        let mut response = ([(header::CONTENT_TYPE, mime_type)], bytes).into_response();
        let disposition = filename
            .map(|f| {
                let safe: String = f
                    .chars()
                    .filter(|c| c.is_ascii_graphic() || *c == ' ')
                    .filter(|c| *c != '"' && *c != '\\')
                    .collect();
                format!("inline; filename=\"{safe}\"")
            })
            .and_then(|d| header::HeaderValue::from_str(&d).ok());
        if let Some(d) = disposition {
            response
                .headers_mut()
                .insert(header::CONTENT_DISPOSITION, d);
        }
        response
    }
}

impl OperationOutput for Download {
    type Inner = ();

    fn inferred_responses(
        _: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<DocStatus>, Response)> {
        let binary = json_schema!({"type": "string", "format": "binary"});
        let response = Response {
            description: "The file's bytes, sent with the Content-Type it was stored with \
                (`image/jpeg`, `application/pdf`, …)"
                .to_owned(),
            content: [("application/octet-stream".to_owned(), media_type(binary))].into(),
            ..Default::default()
        };
        vec![(Some(DocStatus::Code(200)), response)]
    }
}

async fn download(
    State(s): State<AppState>,
    auth: Authed<ConversationsRead>,
    _: NoQuery,
    MediaId(id): MediaId,
) -> ApiResult<Download> {
    Ok(Download(media::get(&s, auth.org_id, id).await?))
}

/// The largest upload: Meta's largest media (a 100 MB document) and the form around it.
const MAX_UPLOAD_BYTES: usize = 101 * 1024 * 1024;

/// `POST /media`'s form: a `file` part (its Content-Type and file name are the file's).
struct MediaForm;

impl FormSpec for MediaForm {
    const WHAT: &'static str = "Media is uploaded as multipart/form-data with a file part.";

    fn schema(_: &mut aide::generate::GenContext) -> schemars::Schema {
        json_schema!({
            "type": "object",
            "properties": {"file": crate::extract::file_part()},
            "required": ["file"]
        })
    }
}

async fn upload(
    State(s): State<AppState>,
    auth: Authed<ConversationsWrite>,
    _: NoQuery,
    MultipartForm(mut form, _): MultipartForm<MediaForm>,
) -> ApiResult<Created<UploadedMedia>> {
    let unreadable = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::business(
                e.status(),
                None,
                format!("The upload is larger than {MAX_UPLOAD_BYTES} bytes."),
            )
        } else {
            ApiError::invalid(format!(
                "the multipart body could not be read: {}",
                e.body_text()
            ))
        }
    };
    while let Some(field) = form.next_field().await.map_err(unreadable)? {
        if field.name() != Some("file") {
            continue;
        }
        let mime = field.content_type().map(str::to_owned).ok_or_else(|| {
            ApiError::invalid("file must have a Content-Type (image/jpeg, application/pdf, …)")
        })?;
        let filename = field.file_name().map(str::to_owned);
        let bytes = field.bytes().await.map_err(unreadable)?;
        let done = media::upload(&s, auth.org_id, bytes.to_vec(), &mime, filename).await?;
        return Ok(Created(done));
    }
    Err(ApiError::invalid(
        "file is required (a multipart part named file)",
    ))
}
