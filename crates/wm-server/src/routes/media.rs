//! `GET /media/{id}`: an inbound media file wm fetched from the platform, with its
//! Content-Type (scope `conversations:read`). A file still being fetched, or one the
//! platform no longer had, is a 409.

use aide::OperationOutput;
use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use aide::generate::GenContext;
use aide::openapi::{Operation, Response, StatusCode as DocStatus};
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use schemars::json_schema;

use crate::error::ApiResult;
use crate::extract::{Authed, ConversationsRead, MediaId, NoQuery};
use crate::openapi::media_type;
use crate::services::media::{self, File};
use crate::state::AppState;

/// The media route.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
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
            description: "The file, with the Content-Type the platform gave it".to_owned(),
            content: [("*/*".to_owned(), media_type(binary))].into(),
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
