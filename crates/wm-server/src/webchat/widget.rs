//! `GET /widget/{websiteToken}.js`: the widget, compiled into the binary (no CDN, works
//! offline), with the chat's token and the server's own origin put in front of it.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::state::AppState;

/// The widget script.
pub const WIDGET_JS: &str = include_str!("assets/widget.js");

/// The script for a chat; a JS comment and 404 for an unknown one.
pub async fn script(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(file): Path<String>,
) -> Response {
    let js = |status: StatusCode, body: String| {
        let mut r = (status, body).into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/javascript; charset=utf-8"),
        );
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=300"),
        );
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        r
    };
    let Some(token) = file.strip_suffix(".js") else {
        return js(StatusCode::NOT_FOUND, "/* no such widget */".into());
    };
    let known = crate::db::channels::by_public_token(&state.db.conn, token)
        .await
        .ok()
        .flatten()
        .is_some_and(|c| c.active);
    if !known {
        return js(StatusCode::NOT_FOUND, "/* no such website chat */".into());
    }
    // The origin the page fetched the script from is where the widget calls.
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("http");
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost");
    let config = serde_json::json!({ "site": token, "base": format!("{scheme}://{host}") });
    js(
        StatusCode::OK,
        format!("window.__wmWidget = {config};\n{WIDGET_JS}"),
    )
}
