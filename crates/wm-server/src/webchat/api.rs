//! The widget's JSON calls, each a thin shell over `crate::services::webchat`.

use axum::Json;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use uuid::Uuid;
use wm_types::webchat::{
    Identify, LeaveEmail, TapButton, VisitorText, VisitorToken, WidgetConfig, WidgetMessage,
    WidgetMessages,
};

use super::visit::{FileOf, Refusal, Visit, bearer};
use crate::error::ApiError;
use crate::extract::ValidatedJson;
use crate::services::webchat::{reading, visitors};
use crate::state::AppState;

/// The largest body the widget's calls take: a 10 MB file and its form.
pub const MAX_BODY: usize = 10 * 1024 * 1024 + 64 * 1024;

type Answer<T> = Result<T, Refusal>;

/// `?token=` and paging of the reads.
#[derive(Debug, Default, serde::Deserialize)]
pub struct ReadQuery {
    token: Option<String>,
    before: Option<Uuid>,
    limit: Option<u64>,
}

/// The visitor a call comes from.
fn person(state: &AppState, v: &Visit, headers: &HeaderMap, query: Option<&str>) -> Answer<String> {
    Ok(v.site
        .visitor(bearer(headers, query).as_deref(), state.now_ms())?)
}

/// `GET /config`.
pub async fn config(v: Visit) -> Json<WidgetConfig> {
    Json(WidgetConfig {
        name: v.site.channel.name.clone().unwrap_or_default(),
        greeting: v.site.settings.greeting.clone(),
        color: v.site.settings.color.clone(),
        locales: vec!["en".into(), "es".into(), "pt".into()],
        email_after_minutes: Some(3),
    })
}

/// `POST /visitors`.
pub async fn visitors(
    State(s): State<AppState>,
    v: Visit,
) -> Answer<(StatusCode, Json<VisitorToken>)> {
    let t = visitors::new_visitor(&s, &v.site, &v.address).await?;
    Ok((StatusCode::CREATED, Json(t)))
}

/// `GET /messages`.
pub async fn messages(
    State(s): State<AppState>,
    v: Visit,
    headers: HeaderMap,
    Query(q): Query<ReadQuery>,
) -> Answer<Json<WidgetMessages>> {
    let person = person(&s, &v, &headers, q.token.as_deref())?;
    let limit = q.limit.unwrap_or(50).clamp(1, 100);
    Ok(Json(
        reading::history(&s, &v.site, &person, q.before, limit).await?,
    ))
}

/// `POST /messages`.
pub async fn write(
    State(s): State<AppState>,
    v: Visit,
    headers: HeaderMap,
    ValidatedJson(body): ValidatedJson<VisitorText>,
) -> Answer<(StatusCode, Json<WidgetMessage>)> {
    let person = person(&s, &v, &headers, None)?;
    let m = visitors::write(&s, &v.site, &person, &v.address, body).await?;
    Ok((StatusCode::CREATED, Json(m)))
}

/// A multipart failure: the body over its limit is a 413 naming it.
fn multipart_error(e: axum::extract::multipart::MultipartError) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::business(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            format!("file must be at most 10485760 bytes (the request at most {MAX_BODY})"),
        )
    } else {
        ApiError::invalid(format!("the form could not be read: {}", e.body_text()))
    }
}

/// `POST /files` (multipart: an optional `clientId`, then `file`).
pub async fn files(
    State(s): State<AppState>,
    v: Visit,
    headers: HeaderMap,
    mut form: Multipart,
) -> Answer<(StatusCode, Json<WidgetMessage>)> {
    let person = person(&s, &v, &headers, None)?;
    let mut client_id = None;
    let mut file = None;
    while let Some(field) = form.next_field().await.map_err(multipart_error)? {
        match field.name() {
            Some("clientId") => {
                let text = field.text().await.map_err(multipart_error)?;
                client_id = Some(text.trim().chars().take(64).collect::<String>())
                    .filter(|c| !c.is_empty());
            }
            Some("file") => {
                let claimed = field.content_type().map(str::to_owned);
                let filename = field
                    .file_name()
                    .map(|n| n.chars().take(200).collect::<String>());
                let bytes = field.bytes().await.map_err(multipart_error)?;
                file = Some((bytes.to_vec(), claimed, filename));
            }
            _ => {}
        }
    }
    let (bytes, claimed, filename) = file.ok_or_else(|| ApiError::invalid("file is required"))?;
    let upload = visitors::Upload {
        bytes,
        claimed,
        filename,
        client_id,
    };
    let m = visitors::send_file(&s, &v.site, &person, &v.address, upload).await?;
    Ok((StatusCode::CREATED, Json(m)))
}

/// `POST /buttons`.
pub async fn tap(
    State(s): State<AppState>,
    v: Visit,
    headers: HeaderMap,
    ValidatedJson(body): ValidatedJson<TapButton>,
) -> Answer<(StatusCode, Json<WidgetMessage>)> {
    let person = person(&s, &v, &headers, None)?;
    let m = visitors::tap(&s, &v.site, &person, &v.address, body).await?;
    Ok((StatusCode::CREATED, Json(m)))
}

/// `POST /identify` (a stale bearer is ignored: only the hash decides).
pub async fn identify(
    State(s): State<AppState>,
    v: Visit,
    ValidatedJson(body): ValidatedJson<Identify>,
) -> Answer<Json<VisitorToken>> {
    Ok(Json(
        visitors::identify(&s, &v.site, &v.address, body).await?,
    ))
}

/// `POST /email`.
pub async fn email(
    State(s): State<AppState>,
    v: Visit,
    headers: HeaderMap,
    ValidatedJson(body): ValidatedJson<LeaveEmail>,
) -> Answer<StatusCode> {
    let person = person(&s, &v, &headers, None)?;
    visitors::leave_email(&s, &v.site, &person, &body.email).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /media/{id}?token=`: a file of the visitor's own chat.
pub async fn media(
    State(s): State<AppState>,
    f: FileOf,
    headers: HeaderMap,
    Path((_, id)): Path<(String, String)>,
    Query(q): Query<ReadQuery>,
) -> Answer<Response> {
    let v = &f;
    let person = v
        .site
        .visitor(bearer(&headers, q.token.as_deref()).as_deref(), s.now_ms())?;
    let id = Uuid::parse_str(&id).map_err(|_| ApiError::not_found("Media"))?;
    let f = reading::file(&s, &v.site, &person, id).await?;
    let mut r = f.bytes.into_response();
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&f.mime_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600"),
    );
    Ok(r)
}
