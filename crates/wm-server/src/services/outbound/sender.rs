//! The account a message leaves from: its provider (the one the account names, else its
//! channel's), the platform account the provider makes of its credentials (the token
//! decrypted just for the call), and the pace it is held to.

use std::sync::Arc;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_core::provider::PlatformAccount;
use wm_types::enums::ChannelType;
use wm_types::messages::MessageDirection;

use crate::db::entities::{conversation, message, phone_number};
use crate::error::{ApiError, ApiResult};
use crate::provider::{Credentials, Provider};
use crate::state::AppState;

/// Where a message is sent from.
#[derive(Clone)]
pub struct Sender {
    /// The provider it goes through.
    pub provider: Arc<Provider>,
    /// The account's row (a number's id): its pace and its uploaded files are kept by it.
    pub id: Uuid,
    /// Its own pace, messages per second (None: the server's).
    pub own_mps: Option<u32>,
    /// How the account is shown (`+…` for a number).
    pub from: String,
    /// The platform account, when its provider has one for it.
    pub account: Option<PlatformAccount>,
}

impl Sender {
    /// A business number's: its provider, and the account its Cloud credentials make.
    /// `None` when no provider runs for MESSAGING_APP_A.
    pub fn of_number(state: &AppState, n: &phone_number::Model) -> Option<Sender> {
        let provider = state
            .registry
            .for_account(ChannelType::MessagingAppA, n.provider.as_deref())?
            .clone();
        let token = match (&state.secret_key, &n.access_token_enc) {
            (Some(key), Some(enc)) => match key.decrypt(enc) {
                Ok(t) => Some(t),
                Err(e) => {
                    tracing::warn!(number = %n.id, error = %e, "the number's access token cannot be decrypted");
                    None
                }
            },
            _ => None,
        };
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
        })
    }

    /// Its provider's name (for metrics and stored media).
    pub fn name(&self) -> &'static str {
        self.provider.name()
    }
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
