//! The account a message leaves from: its provider (the one the account names, else its
//! channel's), the platform account the provider makes of its credentials (the token
//! decrypted just for the call), and the pace it is held to.

use std::sync::Arc;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_core::provider::PlatformAccount;
use wm_types::enums::ChannelType;
use wm_types::messages::MessageDirection;

use crate::db::Unique;
use crate::db::entities::{channel, conversation, message, phone_number};
use crate::error::{ApiError, ApiResult};
use crate::provider::{Credentials, Provider};
use crate::state::AppState;

/// Where a message is sent from.
#[derive(Clone)]
pub struct Sender {
    /// The provider it goes through.
    pub provider: Arc<Provider>,
    /// The account's row (a number's id, or a connected channel's): its pace and its
    /// uploaded files are kept by it.
    pub id: Uuid,
    /// Its own pace, messages per second (None: the server's).
    pub own_mps: Option<u32>,
    /// How the account is shown (`+…` for a number).
    pub from: String,
    /// The platform account, when its provider has one for it.
    pub account: Option<PlatformAccount>,
    /// Whether a person's late reply from it may go tagged as theirs (`HUMAN_AGENT`).
    pub human_agent: bool,
}

impl Sender {
    /// A business number's: its provider, and the account its Cloud credentials make.
    /// `None` when no provider runs for MESSAGING_APP_A.
    pub fn of_number(state: &AppState, n: &phone_number::Model) -> Option<Sender> {
        let provider = state
            .registry
            .for_account(ChannelType::MessagingAppA, n.provider.as_deref())?
            .clone();
        let token = decrypt(state, n.id, n.access_token_enc.as_deref());
        let credentials = Credentials {
            account_id: n.platform_phone_number_id.as_deref(),
            business_id: n.waba_id.as_deref(),
            token: token.as_deref(),
        };
        let account = (provider.account)(&credentials);
        Some(Sender {
            provider,
            id: n.id,
            own_mps: n.mps.and_then(|m| u32::try_from(m).ok()),
            from: n.number_e164.clone(),
            account,
            human_agent: false,
        })
    }

    /// A connected channel's (a Page, an Instagram account, a website chat): its provider,
    /// and the account its token makes (an Instagram account sends through its Page).
    /// `None` when no provider runs for it.
    pub fn of_channel(state: &AppState, ch: &channel::Model) -> Option<Sender> {
        let provider = state
            .registry
            .for_account(ch.channel_type, ch.provider.as_deref())?
            .clone();
        let token = decrypt(state, ch.id, ch.access_token_enc.as_deref());
        let credentials = Credentials {
            account_id: ch.page_id.as_deref().or(ch.account_id.as_deref()),
            business_id: ch.account_id.as_deref(),
            token: token.as_deref(),
        };
        let account = (provider.account)(&credentials);
        Some(Sender {
            own_mps: provider.descriptor.mps,
            provider,
            id: ch.id,
            from: ch.name.clone().unwrap_or_default(),
            account,
            human_agent: ch.human_agent,
        })
    }

    /// Its provider's name (for metrics and stored media).
    pub fn name(&self) -> &'static str {
        self.provider.name()
    }
}

/// An account's token, decrypted for a call (`None`, logged, when it cannot be).
fn decrypt(state: &AppState, row: Uuid, enc: Option<&str>) -> Option<String> {
    match (&state.secret_key, enc) {
        (Some(key), Some(enc)) => match key.decrypt(enc) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!(account = %row, error = %e, "an account's access token cannot be decrypted");
                None
            }
        },
        _ => None,
    }
}

/// What a conversation is answered from.
pub enum Answering {
    /// A business number (WhatsApp).
    Number(phone_number::Model),
    /// The connected channel the conversation is on (a Page, an Instagram account, a
    /// website chat).
    Channel(channel::Model),
}

impl Answering {
    /// The account's row id.
    pub fn id(&self) -> Uuid {
        match self {
            Answering::Number(n) => n.id,
            Answering::Channel(c) => c.id,
        }
    }

    /// Whether a person's late reply may be tagged as theirs.
    pub fn human_agent(&self) -> bool {
        matches!(self, Answering::Channel(c) if c.human_agent)
    }
}

/// Where a conversation is answered from: its channel when that is a connected account,
/// else the business number its customer last wrote to.
pub async fn answering(
    conn: &impl ConnectionTrait,
    c: &conversation::Model,
) -> ApiResult<Answering> {
    if let Some(ch) = channel::Entity::find_by_id(c.channel_id)
        .unique(conn)
        .await?
        && ch.provider.is_some()
    {
        return Ok(Answering::Channel(ch));
    }
    number_of(conn, c).await.map(Answering::Number)
}

/// The account whose row is `id`: a business number's, else a connected channel's.
pub async fn of_row(state: &AppState, id: Uuid) -> Result<Option<Sender>, sea_orm::DbErr> {
    let conn = &state.db.conn;
    if let Some(n) = phone_number::Entity::find_by_id(id).unique(conn).await? {
        return Ok(Sender::of_number(state, &n));
    }
    Ok(channel::Entity::find_by_id(id)
        .unique(conn)
        .await?
        .and_then(|ch| Sender::of_channel(state, &ch)))
}

/// The account a stored outbound message leaves from: its number, else its
/// conversation's connected channel. `None`: neither exists any more (or no provider runs
/// for it).
pub async fn of_message(
    state: &AppState,
    m: &message::Model,
) -> Result<Option<Sender>, sea_orm::DbErr> {
    let conn = &state.db.conn;
    if let Some(id) = m.phone_number_id {
        return Ok(phone_number::Entity::find_by_id(id)
            .unique(conn)
            .await?
            .and_then(|n| Sender::of_number(state, &n)));
    }
    let Some(c) = m.conversation_id else {
        return Ok(None);
    };
    let Some(conversation) = conversation::Entity::find_by_id(c).unique(conn).await? else {
        return Ok(None);
    };
    Ok(channel::Entity::find_by_id(conversation.channel_id)
        .unique(conn)
        .await?
        .filter(|ch| ch.provider.is_some())
        .and_then(|ch| Sender::of_channel(state, &ch)))
}

/// The business number a conversation is answered from: the one its customer last wrote
/// to, else the organisation's first.
pub async fn number_of(
    conn: &impl ConnectionTrait,
    c: &conversation::Model,
) -> ApiResult<phone_number::Model> {
    let written_to: Option<Uuid> = message::Entity::find()
        .filter(message::Column::ConversationId.eq(c.id))
        .filter(message::Column::Direction.eq(MessageDirection::Inbound))
        .filter(message::Column::PhoneNumberId.is_not_null())
        .order_by_desc(message::Column::CreatedAt)
        .one(conn)
        .await?
        .and_then(|m| m.phone_number_id);
    let q = phone_number::Entity::find()
        .filter(phone_number::Column::OrganizationId.eq(c.organization_id));
    let q = match written_to {
        Some(id) => q.filter(phone_number::Column::Id.eq(id)),
        None => q.order_by_asc(phone_number::Column::CreatedAt),
    };
    q.one(conn).await?.ok_or_else(|| {
        ApiError::bad_request("The organization has no sender number to answer from.")
    })
}
