//! Channels: each a connected account of an organisation (its WhatsApp numbers' channel, a
//! Facebook Page, an Instagram account, a website chat), with what its provider needs.

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};
use uuid::Uuid;
use wm_types::enums::ChannelType;

use super::entities::channel;

/// A channel's status while it works.
pub const ACTIVE: &str = "ACTIVE";
/// A channel whose platform refused its token: its replies fail until a new one is saved.
pub const TOKEN_INVALID: &str = "TOKEN_INVALID";

/// A channel to add.
#[derive(Debug, Clone, Default)]
pub struct NewChannel {
    /// Its type.
    pub kind: Option<ChannelType>,
    /// How people in the business call it.
    pub name: Option<String>,
    /// The provider it goes through (none: its type's default).
    pub provider: Option<String>,
    /// The platform's id of the account (a Page id, an Instagram account id).
    pub account_id: Option<String>,
    /// The Page an Instagram account sends through.
    pub page_id: Option<String>,
    /// Its token, encrypted.
    pub access_token_enc: Option<String>,
    /// A website chat's public token.
    pub public_token: Option<String>,
    /// A website chat's identity secret, encrypted.
    pub secret_enc: Option<String>,
    /// Its provider's settings (JSON).
    pub settings: Option<String>,
    /// Whether a human agent's late reply may be tagged.
    pub human_agent: bool,
}

/// Inserts a channel of `org`, active.
pub async fn insert(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: ChannelType,
    c: NewChannel,
    now: i64,
) -> Result<channel::Model, DbErr> {
    channel::Entity::insert(channel::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        channel_type: Set(kind),
        active: Set(true),
        created_at: Set(now),
        name: Set(c.name),
        provider: Set(c.provider),
        account_id: Set(c.account_id),
        page_id: Set(c.page_id),
        access_token_enc: Set(c.access_token_enc),
        status_reason: Set(None),
        public_token: Set(c.public_token),
        secret_enc: Set(c.secret_enc),
        settings: Set(c.settings),
        status: Set(ACTIVE.to_owned()),
        updated_at: Set(Some(now)),
        human_agent: Set(c.human_agent),
    })
    .exec_with_returning(conn)
    .await
}

/// The channel of `provider` whose platform id is `account_id`, whichever organisation
/// connected it.
pub async fn by_account(
    conn: &impl ConnectionTrait,
    provider: &str,
    account_id: &str,
) -> Result<Option<channel::Model>, DbErr> {
    channel::Entity::find()
        .filter(channel::Column::Provider.eq(provider))
        .filter(channel::Column::AccountId.eq(account_id))
        .one(conn)
        .await
}

/// The website chat whose public token is `token`.
pub async fn by_public_token(
    conn: &impl ConnectionTrait,
    token: &str,
) -> Result<Option<channel::Model>, DbErr> {
    channel::Entity::find()
        .filter(channel::Column::PublicToken.eq(token))
        .one(conn)
        .await
}

/// Sets a channel's status (and why), when it is not that already.
pub async fn set_status(
    conn: &impl ConnectionTrait,
    id: Uuid,
    status: &str,
    reason: Option<&str>,
    now: i64,
) -> Result<bool, DbErr> {
    Ok(channel::Entity::update_many()
        .col_expr(channel::Column::Status, Expr::val(status))
        .col_expr(channel::Column::StatusReason, Expr::val(reason))
        .col_expr(channel::Column::UpdatedAt, Expr::val(now))
        .filter(channel::Column::Id.eq(id))
        .filter(channel::Column::Status.ne(status))
        .exec(conn)
        .await?
        .rows_affected
        > 0)
}
