//! `/admin/organizations/{orgId}/channels`: the organisation's channels — a channel type
//! turned on, or a connected account (a Facebook Page, an Instagram account, a website
//! chat) — and their settings.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, patch, post};
use sea_orm::Order;
use wm_types::admin::{Channel, CreateChannel};
use wm_types::channels::{ConnectInstagram, ConnectPage, CreateWebchat, UpdateChannel};
use wm_types::lookups::List;

use super::org::{OperatorOrg, list_in_org};
use crate::db::entities::channel;
use crate::error::ApiResult;
use crate::extract::{ChannelId, NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::channels as accounts;
use crate::services::organizations as svc;
use crate::state::AppState;

/// The channel routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/organizations/{orgId}/channels",
            get(list).post(create),
        )
        .route(
            "/admin/organizations/{orgId}/channels/messenger",
            post(connect_page),
        )
        .route(
            "/admin/organizations/{orgId}/channels/instagram",
            post(connect_instagram),
        )
        .route(
            "/admin/organizations/{orgId}/channels/webchat",
            post(create_webchat),
        )
        .route(
            "/admin/organizations/{orgId}/channels/{channelId}",
            patch(update),
        )
}

async fn connect_page(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<ConnectPage>,
) -> ApiResult<Created<Channel>> {
    accounts::connect_page(&s, org, body).await.map(Created)
}

async fn connect_instagram(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<ConnectInstagram>,
) -> ApiResult<Created<Channel>> {
    accounts::connect_instagram(&s, org, body)
        .await
        .map(Created)
}

async fn create_webchat(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateWebchat>,
) -> ApiResult<Created<Channel>> {
    accounts::create_webchat(&s, org, body).await.map(Created)
}

async fn update(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ChannelId(id): ChannelId,
    ValidatedJson(body): ValidatedJson<UpdateChannel>,
) -> ApiResult<Json<Channel>> {
    accounts::update(&s, org, id, body).await.map(Json)
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateChannel>,
) -> ApiResult<Created<Channel>> {
    svc::create_channel(&s, org, body.channel_type)
        .await
        .map(Created)
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<Channel>>> {
    list_in_org::<channel::Entity, _>(&s, org, (channel::Column::CreatedAt, Order::Asc)).await
}
