//! What a visitor does: writes, sends a file, taps a button, is vouched for by the site,
//! leaves an e-mail. A message goes through the one inbound path every channel uses (the
//! contact found or made, the conversation opened, events and automations), keyed by the
//! visitor and the widget's id of it, so a retry answers the first message.

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_core::platform::{Content, InboundMessage, Person};
use wm_types::enums::{ChannelType, ConversationStatus};
use wm_types::messages::{MessageDirection, MessageInteractive, MessageType};
use wm_types::webchat::{Identify, TapButton, VisitorText, VisitorToken, WidgetMessage};

use super::reading::{contact_of, message_of, widget_message};
use super::{NEW_CONVERSATIONS, NEW_CONVERSATIONS_WINDOW_MS, Site, admit, too_many};
use crate::db::entities::{contact, conversation};
use crate::error::{ApiError, ApiResult};
use crate::services::inbound::{self, At};
use crate::state::AppState;

/// `POST /visitors`: a new anonymous visitor (nothing is kept until they write).
pub async fn new_visitor(state: &AppState, site: &Site, address: &str) -> ApiResult<VisitorToken> {
    admit(state, address, None).await?;
    let person = format!("v.{}", Uuid::now_v7());
    Ok(VisitorToken {
        visitor_token: site.token_for(&person, state.now_ms()),
        visitor_id: person,
    })
}

/// A new conversation would pass the cap of conversations a contact opens: 429.
async fn conversation_cap(state: &AppState, site: &Site, contact: Uuid) -> ApiResult<()> {
    let conn = &state.db.conn;
    let base = conversation::Entity::find()
        .filter(conversation::Column::ContactId.eq(contact))
        .filter(conversation::Column::ChannelId.eq(site.channel.id));
    let open = base
        .clone()
        .filter(conversation::Column::Status.ne(ConversationStatus::Resolved))
        .count(conn)
        .await?;
    if open > 0 {
        return Ok(());
    }
    let since = state.now_ms() - NEW_CONVERSATIONS_WINDOW_MS;
    let recent = base
        .filter(conversation::Column::CreatedAt.gt(since))
        .order_by_asc(conversation::Column::CreatedAt)
        .all(conn)
        .await?;
    if recent.len() as u64 >= NEW_CONVERSATIONS {
        let frees = recent[0].created_at + NEW_CONVERSATIONS_WINDOW_MS - state.now_ms();
        return Err(too_many(
            "new conversations",
            u64::try_from(frees / 1000).unwrap_or(0).max(1),
        ));
    }
    Ok(())
}

/// What a visitor's message is, kept through the inbound path; the message as the widget
/// shows it (a retry of the same `key` answers the first one).
async fn keep(
    state: &AppState,
    site: &Site,
    person: &str,
    key: &str,
    content: Content,
    context_id: Option<String>,
    stored_media: Option<Uuid>,
) -> ApiResult<WidgetMessage> {
    let org = site.channel.organization_id;
    let message_id = format!("{person}:{key}");
    if let Some(contact) = contact_of(state, site, person).await? {
        conversation_cap(state, site, contact).await?;
    }
    let provider = state.registry.named("webchat").cloned().ok_or_else(|| {
        ApiError::Internal(anyhow::anyhow!("the webchat provider is not registered"))
    })?;
    let m = InboundMessage {
        account: site.channel.id.to_string(),
        message_id: message_id.clone(),
        from: Person {
            user_id: Some(person.to_owned()),
            ..Person::default()
        },
        at_ms: None,
        content,
        context_id,
    };
    let kept = inbound::channel_message(
        state,
        org,
        &provider,
        At::Channel(site.channel.id),
        m,
        stored_media,
    )
    .await?;
    if kept.is_some_and(|k| k.created) {
        // Their other tabs, waiting for them to become a contact, look now.
        state.db.ring(super::newcomer(site, person)).await;
    }
    // Kept now or by the first attempt: read back under its key, the visitor's own.
    let row = crate::db::messages::by_platform_id(&state.db.conn, org, &message_id)
        .await?
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("a kept message was not found")))?;
    widget_message(state, site, &row).await
}

/// `POST /messages`: a visitor's text.
pub async fn write(
    state: &AppState,
    site: &Site,
    person: &str,
    address: &str,
    body: VisitorText,
) -> ApiResult<WidgetMessage> {
    admit(state, address, Some(person)).await?;
    let text = body.text.trim().to_owned();
    if text.is_empty() {
        return Err(ApiError::invalid("text must not be blank"));
    }
    let key = body.client_id.unwrap_or_else(|| Uuid::now_v7().to_string());
    let mut content = Content::of(MessageType::Text, "text");
    content.text = Some(text);
    keep(state, site, person, &key, content, None, None).await
}

/// A visitor's file as received: its bytes, the type the browser gave it, its name.
pub struct Upload {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The type the browser claims.
    pub claimed: Option<String>,
    /// Its name.
    pub filename: Option<String>,
    /// The widget's id of the message.
    pub client_id: Option<String>,
}

/// `POST /files`: a visitor's image or document, typed by its content (the name and the
/// claimed type decide nothing), within the chat's limits; nothing is kept when refused.
pub async fn send_file(
    state: &AppState,
    site: &Site,
    person: &str,
    address: &str,
    file: Upload,
) -> ApiResult<WidgetMessage> {
    admit(state, address, Some(person)).await?;
    let channel = &wm_core::platform::descriptor::WEBCHAT;
    if file.bytes.is_empty() {
        return Err(ApiError::invalid("file must not be empty"));
    }
    let sniffed = infer::get(&file.bytes).map(|t| t.mime_type().to_owned());
    let Some((kind, max)) = sniffed.as_deref().and_then(|m| channel.media_limit(m)) else {
        return Err(ApiError::invalid(
            "file must be an image (JPEG, PNG, GIF, WebP) or a PDF document",
        ));
    };
    let mime = sniffed.unwrap_or_default();
    let claimed = file
        .claimed
        .as_deref()
        .map(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|c| !c.is_empty() && c != "application/octet-stream");
    if let Some(claimed) = claimed.filter(|c| *c != mime) {
        return Err(ApiError::invalid(format!(
            "file is {mime} by its content, not the {claimed} it claims to be"
        )));
    }
    let size = file.bytes.len() as u64;
    if size > max {
        return Err(ApiError::business(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            None,
            format!("file must be at most {max} bytes; it has {size}"),
        ));
    }
    let org = site.channel.organization_id;
    let key = file.client_id.unwrap_or_else(|| Uuid::now_v7().to_string());
    // A retry of a file already kept answers it without keeping the bytes again.
    if let Some(row) =
        crate::db::messages::by_platform_id(&state.db.conn, org, &format!("{person}:{key}")).await?
    {
        return widget_message(state, site, &row).await;
    }
    let txn = state.db.write().await?;
    let (media, _) =
        crate::services::media::keep(state, &txn, org, file.bytes, &mime, file.filename.clone())
            .await?;
    txn.commit().await?;
    let mut content = Content::of(kind, kind.as_str().to_ascii_lowercase());
    content.text = None;
    keep(state, site, person, &key, content, None, Some(media)).await
}

/// `POST /buttons`: the visitor tapped a reply button of a business message in their chat.
pub async fn tap(
    state: &AppState,
    site: &Site,
    person: &str,
    address: &str,
    body: TapButton,
) -> ApiResult<WidgetMessage> {
    admit(state, address, Some(person)).await?;
    let not_found = || ApiError::not_found("Message");
    let contact = contact_of(state, site, person)
        .await?
        .ok_or_else(not_found)?;
    let m = message_of(state, site, contact, body.message_id)
        .await?
        .filter(|m| m.direction == MessageDirection::Outbound)
        .ok_or_else(not_found)?;
    let stored = crate::db::messages::stored_of(&m);
    let button = stored
        .interactive
        .iter()
        .flat_map(|i| i.buttons.iter())
        .find(|b| b.id == body.button_id)
        .ok_or_else(|| ApiError::invalid("buttonId must be a button of that message"))?;
    let mut content = Content::of(MessageType::Interactive, "button_reply");
    content.text = Some(button.title.clone());
    content.interactive = Some(MessageInteractive {
        kind: "button_reply".into(),
        reply_id: Some(button.id.clone()),
        title: Some(button.title.clone()),
        buttons: Vec::new(),
    });
    let key = format!("tap:{}:{}", m.id, button.id);
    keep(
        state,
        site,
        person,
        &key,
        content,
        m.platform_message_id,
        None,
    )
    .await
}

/// `POST /identify`: the site vouches for its user (the identifier's HMAC with the chat's
/// secret): the visitor becomes that person, their chat follows them from any browser. A
/// hash that does not match changes nothing (401).
pub async fn identify(
    state: &AppState,
    site: &Site,
    address: &str,
    body: Identify,
) -> ApiResult<VisitorToken> {
    admit(state, address, None).await?;
    if !site.vouches(&body.identifier, &body.identifier_hash) {
        return Err(ApiError::business(
            axum::http::StatusCode::UNAUTHORIZED,
            None,
            "identifierHash does not match the identifier.",
        ));
    }
    let person = format!("u.{}", body.identifier);
    // A person known already keeps their details; what the site tells fills the gaps.
    if let Some(contact) = contact_of(state, site, &person).await? {
        let now = state.now_ms();
        let txn = state.db.write().await?;
        if let Some(email) = body.email.as_deref() {
            fill(&txn, contact, contact::Column::PrimaryEmail, email, now).await?;
        }
        if let Some(name) = body.name.as_deref() {
            fill(&txn, contact, contact::Column::FullName, name.trim(), now).await?;
        }
        txn.commit().await?;
    }
    Ok(VisitorToken {
        visitor_token: site.token_for(&person, state.now_ms()),
        visitor_id: person,
    })
}

/// Sets a contact's `column` to `value` when it has none.
async fn fill(
    txn: &crate::db::WriteTxn,
    contact: Uuid,
    column: contact::Column,
    value: &str,
    now: i64,
) -> ApiResult<()> {
    contact::Entity::update_many()
        .col_expr(column, Expr::val(value))
        .col_expr(contact::Column::UpdatedAt, Expr::val(now))
        .filter(contact::Column::Id.eq(contact))
        .filter(column.is_null())
        .exec(&**txn)
        .await?;
    Ok(())
}

/// `POST /email`: the visitor's address for when nobody answers, kept on their contact
/// when it has none (they must have written first).
pub async fn leave_email(
    state: &AppState,
    site: &Site,
    person: &str,
    email: &str,
) -> ApiResult<()> {
    let contact = contact_of(state, site, person).await?.ok_or_else(|| {
        ApiError::bad_request("Write a message first; the address is kept with it.")
    })?;
    let txn = state.db.write().await?;
    fill(
        &txn,
        contact,
        contact::Column::PrimaryEmail,
        email.trim(),
        state.now_ms(),
    )
    .await?;
    txn.commit().await?;
    debug_assert_eq!(site.channel.channel_type, ChannelType::Webchat);
    Ok(())
}
