//! Routing: which Graph paths the Messenger side answers, and its own routes.
//!
//! `POST /{version}/{id}/messages` and `GET /{version}/{id}` are shared with the
//! WhatsApp side. The Messenger side takes a call only when it is about Messenger
//! state, so WhatsApp calls are answered exactly as before:
//! * `/messages`: `{id}` is a registered Page id, or `me` while any Page is registered;
//! * `GET /{id}`: the same, or `{id}` is a registered PSID/IGSID, or the token is a
//!   registered Page token.

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::extract::{ConnectInfo, FromRequest, Path, RawQuery, Request, State};
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};

use super::body::{self, MAX_BODY};
use crate::FakeGraph;
use crate::server::ConnHandle;

/// `v23.0`-like.
pub(crate) fn is_version(v: &str) -> bool {
    v.strip_prefix('v').is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
    })
}

impl FakeGraph {
    /// Whether `/{id}/messages` is a Messenger call.
    fn is_messenger_edge(&self, id: &str) -> bool {
        let store = self.msgr();
        store.pages.contains_key(id) || (id == "me" && !store.pages.is_empty())
    }

    /// Whether `GET /{id}` is a Messenger call.
    fn is_messenger_node(&self, id: &str, token: Option<&str>) -> bool {
        if self.is_messenger_edge(id) {
            return true;
        }
        let store = self.msgr();
        store.knows_scoped_id(id) || token.is_some_and(|t| store.tokens.contains_key(t))
    }
}

/// `POST /{version}/{id}/messages`: Messenger Send API or WhatsApp send.
pub(crate) async fn messages(
    State(fake): State<FakeGraph>,
    ConnectInfo(conn): ConnectInfo<ConnHandle>,
    Path((version, id)): Path<(String, String)>,
    req: Request,
) -> Response {
    if fake.is_messenger_edge(&id) {
        if !is_version(&version) {
            return crate::server::unknown_path(req.uri().clone()).await;
        }
        return super::send::handle(fake, id, req).await;
    }
    // The route raises the body limit for Messenger uploads; without its extension the
    // WhatsApp body is read under axum's default limit, exactly as before.
    let (mut parts, body) = req.into_parts();
    parts.extensions.clear();
    let req = Request::from_parts(parts, body);
    let headers = req.headers().clone();
    let query = req.uri().query().map(str::to_owned);
    let bytes = match Bytes::from_request(req, &()).await {
        Ok(b) => b,
        Err(rejection) => return rejection.into_response(),
    };
    crate::send::send_message(
        State(fake),
        ConnectInfo(conn),
        Path((version, id)),
        headers,
        RawQuery(query),
        bytes,
    )
    .await
}

/// The `/{version}/{id}/messages` route: [`messages`], with room for multipart sends.
pub(crate) fn messages_route() -> MethodRouter<FakeGraph> {
    post(messages).layer(DefaultBodyLimit::max(MAX_BODY))
}

/// `GET /{version}/{id}`: Messenger profile / Page node, or WhatsApp media retrieve.
pub(crate) async fn node(
    State(fake): State<FakeGraph>,
    Path((version, id)): Path<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let token = body::token(&headers, query.as_deref(), &body::Params::default());
    if fake.is_messenger_node(&id, token.as_deref()) {
        return super::profile::get_node(
            State(fake),
            Path((version, id)),
            uri,
            headers,
            RawQuery(query),
        )
        .await;
    }
    crate::media_http::retrieve(
        State(fake),
        Path((version, id)),
        uri,
        headers,
        RawQuery(query),
    )
    .await
}

/// The Messenger-only routes: attachment upload, CDN files, control API.
pub(crate) fn routes() -> Router<FakeGraph> {
    Router::new()
        .route(
            "/{version}/{id}/message_attachments",
            post(super::attachments::upload).layer(DefaultBodyLimit::max(MAX_BODY)),
        )
        .route("/fbcdn/v/{dir}/{file}", get(super::cdn::messenger_file))
        .route("/ig_messaging_cdn/", get(super::cdn::instagram_file))
        .merge(super::control::routes())
}
