//! Connecting accounts as channels: a Facebook Page (Messenger), an Instagram account
//! through its Page, a website chat. Each is a channel row naming its provider, holding its
//! token (encrypted) or, for a website chat, its public token and identity secret.

use rand::Rng;
use uuid::Uuid;
use wm_types::admin::Channel;
use wm_types::channels::{
    ConnectInstagram, ConnectPage, CreateWebchat, UpdateChannel, WebchatSettings,
};
use wm_types::enums::ChannelType;

use crate::db::Unique;
use crate::db::channels::{self as rows, NewChannel};
use crate::db::entities::channel;
use crate::db::tenant::find_in_org;
use crate::error::{ApiError, ApiResult, is_unique_violation};
use crate::state::AppState;

const NOT_FOUND: &str = "Channel";

/// The stored form of a secret: encrypted, or a 400 when the server has no key.
fn seal(state: &AppState, field: &str, secret: &str) -> ApiResult<String> {
    let key = state.secret_key.as_ref().ok_or_else(|| {
        ApiError::invalid(format!(
            "{field} cannot be stored: the server has no WM_SECRET_KEY"
        ))
    })?;
    Ok(key.encrypt(secret))
}

/// Allowed origins as browsers send them (`scheme://host[:port]`, lower case, no path).
pub fn origins(list: &[String]) -> ApiResult<Vec<String>> {
    let mut out = Vec::new();
    for raw in list {
        let url = url::Url::parse(raw.trim()).map_err(|_| {
            ApiError::invalid(format!(
                "allowedOrigins must be origins such as https://shop.example ({raw:?} is not)"
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(ApiError::invalid(format!(
                "allowedOrigins must be http(s) origins ({raw:?} is not)"
            )));
        }
        let origin = url.origin().ascii_serialization();
        if !out.contains(&origin) {
            out.push(origin);
        }
    }
    Ok(out)
}

async fn connect(
    state: &AppState,
    org: Uuid,
    kind: ChannelType,
    c: NewChannel,
) -> ApiResult<channel::Model> {
    let txn = state.db.write().await?;
    let row = rows::insert(&*txn, org, kind, c, state.now_ms())
        .await
        .map_err(|e| {
            if is_unique_violation(&e) {
                ApiError::conflict("This account is connected already.")
            } else {
                e.into()
            }
        })?;
    txn.commit().await?;
    crate::changes::publish(state, crate::changes::Change::Org(org)).await;
    Ok(row)
}

/// `POST /admin/organizations/{orgId}/channels/messenger`.
pub async fn connect_page(state: &AppState, org: Uuid, body: ConnectPage) -> ApiResult<Channel> {
    let c = NewChannel {
        name: Some(body.name.trim().to_owned()),
        provider: Some("messenger".into()),
        account_id: Some(body.page_id.clone()),
        page_id: Some(body.page_id),
        access_token_enc: Some(seal(state, "accessToken", &body.access_token)?),
        human_agent: body.human_agent.unwrap_or(false),
        ..NewChannel::default()
    };
    connect(state, org, ChannelType::SocialMsgA, c)
        .await
        .map(Channel::from)
}

/// `POST /admin/organizations/{orgId}/channels/instagram`.
pub async fn connect_instagram(
    state: &AppState,
    org: Uuid,
    body: ConnectInstagram,
) -> ApiResult<Channel> {
    let c = NewChannel {
        name: Some(body.name.trim().to_owned()),
        provider: Some("instagram".into()),
        account_id: Some(body.instagram_id),
        page_id: Some(body.page_id),
        access_token_enc: Some(seal(state, "accessToken", &body.access_token)?),
        human_agent: body.human_agent.unwrap_or(false),
        ..NewChannel::default()
    };
    connect(state, org, ChannelType::SocialAppA, c)
        .await
        .map(Channel::from)
}

/// 24 random bytes, URL-safe.
fn random(prefix: &str) -> String {
    use base64::Engine;
    let mut bytes = [0u8; 24];
    rand::rng().fill(&mut bytes);
    format!(
        "{prefix}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// `POST /admin/organizations/{orgId}/channels/webchat`: the answer carries the identity
/// secret this once.
pub async fn create_webchat(
    state: &AppState,
    org: Uuid,
    body: CreateWebchat,
) -> ApiResult<Channel> {
    let settings = WebchatSettings {
        allowed_origins: origins(&body.allowed_origins)?,
        greeting: body
            .greeting
            .map(|g| g.trim().to_owned())
            .filter(|g| !g.is_empty()),
        color: body.color,
    };
    let secret = random("wcs_");
    let c = NewChannel {
        name: Some(body.name.trim().to_owned()),
        provider: Some("webchat".into()),
        public_token: Some(random("wct_")),
        secret_enc: Some(seal(state, "the identity secret", &secret)?),
        settings: Some(serde_json::to_string(&settings).map_err(anyhow::Error::from)?),
        ..NewChannel::default()
    };
    let row = connect(state, org, ChannelType::Webchat, c).await?;
    Ok(Channel {
        identity_secret: Some(secret),
        ..Channel::from(row)
    })
}

/// `PATCH /admin/organizations/{orgId}/channels/{id}`.
pub async fn update(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: UpdateChannel,
) -> ApiResult<Channel> {
    use sea_orm::{ActiveModelTrait, ActiveValue::Set, IntoActiveModel};
    let txn = state.db.write().await?;
    let row = find_in_org::<channel::Entity>(org, id)
        .unique(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    let webchat = row.channel_type == ChannelType::Webchat;
    let mut settings: WebchatSettings = row
        .settings
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let mut am = row.clone().into_active_model();
    if let Some(name) = body.name {
        am.name = Set(Some(name.trim().to_owned()));
    }
    if let Some(token) = body.access_token {
        if row.provider.is_none() || webchat {
            return Err(ApiError::invalid("accessToken: this channel has no token"));
        }
        am.access_token_enc = Set(Some(seal(state, "accessToken", &token)?));
        am.status = Set(rows::ACTIVE.to_owned());
        am.status_reason = Set(None);
    }
    if let Some(h) = body.human_agent {
        am.human_agent = Set(h);
    }
    if let Some(active) = body.active {
        am.active = Set(active);
    }
    let touches_webchat =
        body.allowed_origins.is_some() || body.greeting.is_some() || body.color.is_some();
    if touches_webchat && !webchat {
        return Err(ApiError::invalid(
            "allowedOrigins, greeting and color are a website chat's",
        ));
    }
    if let Some(list) = body.allowed_origins {
        settings.allowed_origins = origins(&list)?;
    }
    if let Some(g) = body.greeting {
        settings.greeting = Some(g.trim().to_owned()).filter(|g| !g.is_empty());
    }
    if let Some(c) = body.color {
        settings.color = Some(c);
    }
    if touches_webchat {
        am.settings = Set(Some(
            serde_json::to_string(&settings).map_err(anyhow::Error::from)?,
        ));
    }
    am.updated_at = Set(Some(state.now_ms()));
    let saved = am.update(&*txn).await?;
    txn.commit().await?;
    crate::changes::publish(state, crate::changes::Change::Org(org)).await;
    Ok(Channel::from(saved))
}
